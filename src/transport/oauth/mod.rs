//! OAuth 2.1 for MCP servers over HTTP (MCP "Authorization", 2025-06-18 and later): when a
//! POST is refused with 401 (or 403 `insufficient_scope`), find the authorization server
//! through the server's protected-resource metadata (RFC 9728), read its metadata (RFC 8414 /
//! OpenID discovery), get a client id (pre-registered, a client ID metadata document URL, or
//! dynamic registration, RFC 7591), run the authorization-code flow with PKCE (S256) and the
//! RFC 8707 `resource`, and send the access token as `Authorization: Bearer` from then on.
//!
//! The one step that needs a person, visiting the authorization URL and coming back to the
//! redirect URI, is the application's ([`Authorizer::Callback`]); [`Authorizer::Headless`]
//! follows the authorization server's redirect itself, which works with servers that approve
//! without interaction (test servers, pre-approved clients).

use std::fmt;
use std::sync::Arc;

use reqwest::header::{HeaderValue, WWW_AUTHENTICATE};
use reqwest::{Response, StatusCode, Url};

use super::TransportError;
use super::error::OAuthStep;

pub(super) mod challenge;
mod discovery;
mod flow;

pub use challenge::Challenge;

use discovery::discover;
use flow::code_flow;

/// The redirect URI used when none is configured (a loopback URI, as native apps use).
pub const DEFAULT_REDIRECT_URI: &str = "http://127.0.0.1:8765/callback";

/// Visits an authorization URL on the user's behalf and returns the URL the authorization
/// server redirected to (the redirect URI with `code`, `state` and maybe `iss`).
pub type AuthorizeFn = dyn Fn(&str) -> Result<String, String> + Send + Sync;

/// Who performs the authorization step.
#[derive(Clone)]
pub enum Authorizer {
    /// GET the authorization URL and take the redirect it answers with (no user involved).
    Headless,
    /// The application's: open a browser, wait for the redirect, return its URL. Called on a
    /// blocking thread.
    Callback(Arc<AuthorizeFn>),
}

impl fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Authorizer::Headless => f.write_str("Headless"),
            Authorizer::Callback(_) => f.write_str("Callback(..)"),
        }
    }
}

/// How the client authorizes itself with MCP servers that require OAuth.
#[derive(Clone)]
#[non_exhaustive]
pub struct OAuthConfig {
    /// A pre-registered client id (then no registration happens).
    pub client_id: Option<String>,
    /// Its secret, for a confidential pre-registered client.
    pub client_secret: Option<String>,
    /// An HTTPS URL of this client's metadata document, used as the client id when the
    /// authorization server supports client ID metadata documents.
    pub client_metadata_url: Option<String>,
    /// Where the authorization server sends the user back.
    pub redirect_uri: String,
    /// The name given at dynamic registration.
    pub client_name: String,
    /// Who visits the authorization URL.
    pub authorizer: Authorizer,
    /// How many times one request may be re-authorized for more scope (403
    /// `insufficient_scope`) before the refusal is final: at most `1 + max_step_ups`
    /// authorizations per request. Default 2.
    pub max_step_ups: u32,
    /// The longest each HTTP exchange of the flow may take (metadata, registration, token).
    /// Default 30 s.
    pub http_timeout: std::time::Duration,
    /// The longest the user's step ([`Authorizer::Callback`]) may take. Default 10 minutes.
    pub user_timeout: std::time::Duration,
}

impl fmt::Debug for OAuthConfig {
    /// The secret is not printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("client_metadata_url", &self.client_metadata_url)
            .field("redirect_uri", &self.redirect_uri)
            .field("authorizer", &self.authorizer)
            .finish_non_exhaustive()
    }
}

impl OAuthConfig {
    /// Dynamic registration (or a client ID metadata document, when set), the default
    /// redirect URI, and `authorizer` for the user's step.
    pub fn new(authorizer: Authorizer) -> OAuthConfig {
        OAuthConfig {
            client_id: None,
            client_secret: None,
            client_metadata_url: None,
            redirect_uri: DEFAULT_REDIRECT_URI.to_owned(),
            client_name: "ringmcp".to_owned(),
            authorizer,
            max_step_ups: 2,
            http_timeout: std::time::Duration::from_secs(30),
            user_timeout: std::time::Duration::from_secs(600),
        }
    }

    /// A pre-registered client.
    pub fn client(mut self, id: impl Into<String>, secret: Option<String>) -> OAuthConfig {
        self.client_id = Some(id.into());
        self.client_secret = secret;
        self
    }

    /// The URL of this client's metadata document (client ID metadata documents).
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> OAuthConfig {
        self.client_metadata_url = Some(url.into());
        self
    }
}

/// The authorization server as discovered, and this client's registration with it.
#[derive(Debug, Clone)]
struct Server {
    issuer: String,
    authorization_endpoint: Url,
    token_endpoint: Url,
    /// `authorization_response_iss_parameter_supported`.
    iss_supported: bool,
    /// The resource (RFC 8707) the token is for.
    resource: String,
    client_id: String,
    client_secret: Option<String>,
    /// `client_secret_basic`, `client_secret_post` or `none`.
    auth_method: String,
    /// `scopes_supported` of the resource, then of the authorization server.
    scopes_supported: Vec<String>,
}

/// The token in use, and what the client knows of its server.
#[derive(Debug, Default)]
pub(crate) struct OAuthState {
    server: Option<Server>,
    pub(crate) token: Option<String>,
    /// The scopes asked for last.
    scopes: Vec<String>,
    /// The last flow failed (with the token that was in use then): requests that were
    /// waiting for it get its error instead of running it again.
    pub(crate) failed: Option<(Option<String>, String)>,
}

fn fail(step: OAuthStep, reason: impl Into<String>) -> TransportError {
    TransportError::OAuth { step, reason: reason.into(), source: None }
}

/// A step that failed because of `source` (the HTTP client's, a URL's or a JSON error), with
/// what was being done (may be empty).
fn fail_with(
    step: OAuthStep,
    reason: impl Into<String>,
    source: impl std::error::Error + Send + Sync + 'static,
) -> TransportError {
    TransportError::OAuth { step, reason: reason.into(), source: Some(Box::new(source)) }
}

/// Runs whatever part of the flow is needed to answer `challenge` (from a response with
/// `status` to a request to `resource_url`), leaving a token in `state`.
pub(crate) async fn authorize(
    client: &reqwest::Client,
    config: &OAuthConfig,
    state: &mut OAuthState,
    resource_url: &Url,
    status: u16,
    challenge: &Challenge,
) -> Result<(), TransportError> {
    // A 401 while holding a token may mean the resource moved to another authorization
    // server: the metadata is read again (a registration is kept while the issuer is the same).
    if state.server.is_none() || status == 401 {
        let previous = state.server.take();
        state.server =
            Some(discover(client, config, resource_url, challenge, previous.as_ref()).await?);
    }
    let server = state.server.clone().expect("just discovered");
    // Scope (MCP "scope selection"): the challenge's, else the resource's scopes_supported,
    // else none; a step-up adds the new scopes to those held.
    let mut scopes: Vec<String> = match &challenge.scope {
        Some(scope) => scope.split_whitespace().map(str::to_owned).collect(),
        None if status == 401 => server.scopes_supported.clone(),
        None => Vec::new(),
    };
    if status == 403 {
        for held in &state.scopes {
            if !scopes.contains(held) {
                scopes.push(held.clone());
            }
        }
    }
    let token = code_flow(client, config, &server, &scopes).await?;
    state.scopes = scopes;
    state.token = Some(token);
    Ok(())
}

/// The challenge of a 401/403 response.
pub(crate) fn challenge_of(response: &Response) -> Challenge {
    response
        .headers()
        .get_all(WWW_AUTHENTICATE)
        .iter()
        .filter_map(|v: &HeaderValue| v.to_str().ok())
        .map(Challenge::parse)
        .find(|c| c.resource_metadata.is_some() || c.scope.is_some() || c.error.is_some())
        .unwrap_or_default()
}

/// Whether a response calls for (re)authorization.
pub(crate) fn needs_auth(status: StatusCode, challenge: &Challenge) -> bool {
    status == StatusCode::UNAUTHORIZED
        || (status == StatusCode::FORBIDDEN
            && challenge.error.as_deref() == Some("insufficient_scope"))
}

#[cfg(test)]
mod tests {
    use super::discovery::{canonical, well_known};
    use super::flow::{random_token, s256};
    use super::*;

    #[test]
    fn challenges_parse() {
        let c = Challenge::parse(
            r#"Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://x/.well-known/oauth-protected-resource/mcp""#,
        );
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(c.scope.as_deref(), Some("files:read files:write"));
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("https://x/.well-known/oauth-protected-resource/mcp")
        );
        let c = Challenge::parse(r#"Bearer realm="a\"b", error=invalid_token"#);
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        assert_eq!(Challenge::parse("Basic realm=x"), Challenge::default());
    }

    #[test]
    fn well_known_urls_and_pkce() {
        let base = Url::parse("http://h:1/mcp").unwrap();
        assert_eq!(
            well_known(&base, "oauth-protected-resource", true).as_str(),
            "http://h:1/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            well_known(&base, "oauth-protected-resource", false).as_str(),
            "http://h:1/.well-known/oauth-protected-resource"
        );
        // RFC 7636 appendix B.
        assert_eq!(
            s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        assert_eq!(canonical("http://h/mcp/#x"), "http://h/mcp");
        let v = random_token(48).unwrap();
        assert!(v.len() >= 43 && v.len() <= 128);
    }
}
