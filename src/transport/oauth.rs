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

use base64::Engine;
use reqwest::header::{AUTHORIZATION, HeaderValue, LOCATION, WWW_AUTHENTICATE};
use reqwest::{Response, StatusCode, Url};
use serde::Deserialize;
use serde_json::{Value, json};

use super::TransportError;
use super::error::OAuthStep;

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

/// What a 401/403 said in `WWW-Authenticate: Bearer …`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Challenge {
    /// The protected-resource metadata URL (RFC 9728).
    pub resource_metadata: Option<String>,
    /// The scopes the request needs.
    pub scope: Option<String>,
    /// `invalid_token`, `insufficient_scope`, ...
    pub error: Option<String>,
}

impl Challenge {
    /// Parses the `Bearer` challenge's auth-params (quoted or token values).
    pub fn parse(header: &str) -> Challenge {
        let mut c = Challenge::default();
        let rest = header.trim();
        let Some(params) = rest.strip_prefix("Bearer").or_else(|| rest.strip_prefix("bearer"))
        else {
            return c;
        };
        let mut s = params.trim_start();
        while !s.is_empty() {
            let Some(eq) = s.find('=') else { break };
            let key = s[..eq].trim().trim_start_matches(',').trim().to_ascii_lowercase();
            s = &s[eq + 1..];
            let value;
            if let Some(quoted) = s.strip_prefix('"') {
                let mut out = String::new();
                let mut chars = quoted.char_indices();
                let mut end = quoted.len();
                while let Some((i, ch)) = chars.next() {
                    match ch {
                        '\\' => {
                            if let Some((_, next)) = chars.next() {
                                out.push(next);
                            }
                        }
                        '"' => {
                            end = i + 1;
                            break;
                        }
                        _ => out.push(ch),
                    }
                }
                value = out;
                s = &quoted[end.min(quoted.len())..];
            } else {
                let stop = s.find(',').unwrap_or(s.len());
                value = s[..stop].trim().to_owned();
                s = &s[stop..];
            }
            s = s.trim_start().trim_start_matches(',').trim_start();
            match key.as_str() {
                "resource_metadata" => c.resource_metadata = Some(value),
                "scope" => c.scope = Some(value),
                "error" => c.error = Some(value),
                _ => {}
            }
        }
        c
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

#[derive(Deserialize)]
struct ProtectedResource {
    resource: Option<String>,
    #[serde(default)]
    authorization_servers: Vec<String>,
    #[serde(default)]
    scopes_supported: Vec<String>,
}

#[derive(Deserialize)]
struct AuthServerMetadata {
    issuer: Option<String>,
    authorization_endpoint: Option<String>,
    token_endpoint: Option<String>,
    registration_endpoint: Option<String>,
    #[serde(default)]
    token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    code_challenge_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    scopes_supported: Vec<String>,
    #[serde(default)]
    client_id_metadata_document_supported: bool,
    #[serde(default)]
    authorization_response_iss_parameter_supported: bool,
}

/// GETs a JSON document; `None` for any non-success answer (the next candidate is tried).
async fn get_json<T: serde::de::DeserializeOwned>(
    client: &reqwest::Client,
    url: &Url,
    timeout: std::time::Duration,
) -> Result<Option<T>, TransportError> {
    let response = client
        .get(url.clone())
        .timeout(timeout)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| fail_with(OAuthStep::Discovery, format!("GET {url}"), e))?;
    if !response.status().is_success() {
        return Ok(None);
    }
    let bytes = response
        .bytes()
        .await
        .map_err(|e| fail_with(OAuthStep::Discovery, format!("GET {url}"), e))?;
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| fail_with(OAuthStep::Discovery, format!("{url} is not the expected JSON"), e))
}

/// The first of `candidates` that serves the document, in order (discovery tries well-known
/// locations one after the other).
async fn first_found<T: serde::de::DeserializeOwned>(
    client: &reqwest::Client,
    candidates: &[Url],
    timeout: std::time::Duration,
) -> Result<Option<T>, TransportError> {
    for url in candidates {
        if let Some(found) = get_json(client, url, timeout).await? {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

/// `origin` + `/.well-known/{name}` + `path` (path-inserted well-known URI), or without the
/// path when it is empty or `/`.
fn well_known(base: &Url, name: &str, with_path: bool) -> Url {
    let mut url = base.clone();
    let path = base.path().trim_end_matches('/');
    let full = if with_path && !path.is_empty() {
        format!("/.well-known/{name}{path}")
    } else {
        format!("/.well-known/{name}")
    };
    url.set_path(&full);
    url.set_query(None);
    url.set_fragment(None);
    url
}

/// The resource identifier of `url` (RFC 8707: no fragment; compared without a trailing
/// slash).
fn canonical(url: &str) -> String {
    let mut u = url.trim().to_owned();
    if let Some(i) = u.find('#') {
        u.truncate(i);
    }
    while u.ends_with('/') {
        u.pop();
    }
    u
}

fn random_token(bytes: usize) -> Result<String, TransportError> {
    use ring::rand::SecureRandom;
    let mut buf = vec![0u8; bytes];
    ring::rand::SystemRandom::new()
        .fill(&mut buf)
        .map_err(|_| fail(OAuthStep::Pkce, "no system randomness"))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(buf))
}

fn s256(verifier: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest.as_ref())
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

/// Protected-resource metadata, then the authorization server's metadata, then a client id.
async fn discover(
    client: &reqwest::Client,
    config: &OAuthConfig,
    resource_url: &Url,
    challenge: &Challenge,
    previous: Option<&Server>,
) -> Result<Server, TransportError> {
    let timeout = config.http_timeout;
    let mut candidates = Vec::new();
    if let Some(url) = &challenge.resource_metadata {
        let url = resource_url.join(url).map_err(|e| {
            fail_with(OAuthStep::Discovery, format!("resource_metadata {url:?}"), e)
        })?;
        candidates.push(url);
    }
    candidates.push(well_known(resource_url, "oauth-protected-resource", true));
    candidates.push(well_known(resource_url, "oauth-protected-resource", false));
    candidates.dedup();
    let prm = first_found::<ProtectedResource>(client, &candidates, timeout).await?;
    let prm = prm.ok_or_else(|| {
        fail(OAuthStep::Discovery, format!("no protected-resource metadata for {resource_url}"))
    })?;
    let resource = prm.resource.clone().unwrap_or_else(|| resource_url.to_string());
    if canonical(&resource) != canonical(resource_url.as_str())
        && !canonical(resource_url.as_str()).starts_with(&format!("{}/", canonical(&resource)))
    {
        return Err(fail(
            OAuthStep::Discovery,
            format!("the protected-resource metadata is for {resource:?}, not {resource_url}"),
        ));
    }
    let issuer = prm.authorization_servers.first().cloned().ok_or_else(|| {
        fail(OAuthStep::Discovery, "the protected-resource metadata names no authorization server")
    })?;
    let issuer_url = Url::parse(&issuer)
        .map_err(|e| fail_with(OAuthStep::Discovery, format!("issuer {issuer:?}"), e))?;
    let has_path = !issuer_url.path().trim_end_matches('/').is_empty();
    let mut as_candidates = vec![well_known(&issuer_url, "oauth-authorization-server", true)];
    as_candidates.push(well_known(&issuer_url, "openid-configuration", true));
    if has_path {
        let mut appended = issuer_url.clone();
        let path =
            format!("{}/.well-known/openid-configuration", issuer_url.path().trim_end_matches('/'));
        appended.set_path(&path);
        as_candidates.push(appended);
    }
    let meta = first_found::<AuthServerMetadata>(client, &as_candidates, timeout).await?;
    let meta = meta.ok_or_else(|| {
        fail(OAuthStep::Discovery, format!("no authorization server metadata for {issuer}"))
    })?;
    let declared = meta.issuer.clone().unwrap_or_default();
    if declared != issuer {
        return Err(fail(
            OAuthStep::Discovery,
            format!("the authorization server metadata says issuer {declared:?}, not {issuer:?}"),
        ));
    }
    // MCP: without `code_challenge_methods_supported` listing S256 the client must not proceed
    // (absent means no PKCE).
    if !meta.code_challenge_methods_supported.iter().flatten().any(|m| m == "S256") {
        return Err(fail(
            OAuthStep::Discovery,
            "the authorization server does not advertise PKCE S256",
        ));
    }
    let endpoint = |name: &'static str, value: &Option<String>| {
        let value =
            value.as_deref().ok_or_else(|| fail(OAuthStep::Discovery, format!("no {name}")))?;
        Url::parse(value)
            .map_err(|e| fail_with(OAuthStep::Discovery, format!("{name} {value:?}"), e))
    };
    let authorization_endpoint = endpoint("authorization_endpoint", &meta.authorization_endpoint)?;
    let token_endpoint = endpoint("token_endpoint", &meta.token_endpoint)?;
    let methods = meta
        .token_endpoint_auth_methods_supported
        .clone()
        .unwrap_or_else(|| vec!["client_secret_basic".to_owned()]);
    let (client_id, client_secret, auth_method) = match previous {
        Some(p) if p.issuer == issuer => {
            (p.client_id.clone(), p.client_secret.clone(), p.auth_method.clone())
        }
        _ => register(client, config, &meta, &methods).await?,
    };
    let mut scopes_supported = prm.scopes_supported.clone();
    if scopes_supported.is_empty() {
        scopes_supported = meta.scopes_supported.clone();
    }
    Ok(Server {
        issuer,
        authorization_endpoint,
        token_endpoint,
        iss_supported: meta.authorization_response_iss_parameter_supported,
        resource: canonical(&resource),
        client_id,
        client_secret,
        auth_method,
        scopes_supported,
    })
}

/// The client id: pre-registered, a metadata document URL (when supported), or dynamic
/// registration.
async fn register(
    client: &reqwest::Client,
    config: &OAuthConfig,
    meta: &AuthServerMetadata,
    methods: &[String],
) -> Result<(String, Option<String>, String), TransportError> {
    let pick = |secret: bool| {
        let prefer: &[&str] =
            if secret { &["client_secret_basic", "client_secret_post", "none"] } else { &["none"] };
        prefer.iter().find(|m| methods.iter().any(|s| s == *m)).map_or_else(
            || methods.first().cloned().unwrap_or_else(|| "none".into()),
            |m| (*m).to_owned(),
        )
    };
    if let Some(id) = &config.client_id {
        return Ok((
            id.clone(),
            config.client_secret.clone(),
            pick(config.client_secret.is_some()),
        ));
    }
    if meta.client_id_metadata_document_supported
        && let Some(url) = &config.client_metadata_url
    {
        return Ok((url.clone(), None, "none".to_owned()));
    }
    let Some(endpoint) = &meta.registration_endpoint else {
        return Err(fail(
            OAuthStep::Registration,
            "the authorization server offers no dynamic registration and no client id is configured",
        ));
    };
    // A public client unless the server only takes confidential ones.
    let method = if methods.iter().any(|m| m == "none") { "none".to_owned() } else { pick(true) };
    let body = json!({
        "client_name": config.client_name,
        "redirect_uris": [config.redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
        "application_type": "native",
    });
    let response = client
        .post(endpoint)
        .timeout(config.http_timeout)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body.to_string())
        .send()
        .await
        .map_err(|e| fail_with(OAuthStep::Registration, String::new(), e))?;
    let status = response.status();
    let answer = json_body(response, OAuthStep::Registration).await?;
    if !status.is_success() {
        return Err(fail(OAuthStep::Registration, format!("HTTP {status}: {answer}")));
    }
    let id = answer["client_id"]
        .as_str()
        .ok_or_else(|| fail(OAuthStep::Registration, "no client_id in the registration answer"))?;
    let secret = answer["client_secret"].as_str().map(str::to_owned);
    let method = answer["token_endpoint_auth_method"]
        .as_str()
        .map_or_else(|| if secret.is_some() { pick(true) } else { "none".into() }, str::to_owned);
    Ok((id.to_owned(), secret, method))
}

/// The authorization-code flow with PKCE; returns the access token.
async fn code_flow(
    client: &reqwest::Client,
    config: &OAuthConfig,
    server: &Server,
    scopes: &[String],
) -> Result<String, TransportError> {
    let verifier = random_token(48)?;
    let state = random_token(24)?;
    let mut url = server.authorization_endpoint.clone();
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("response_type", "code");
        q.append_pair("client_id", &server.client_id);
        q.append_pair("redirect_uri", &config.redirect_uri);
        q.append_pair("code_challenge", &s256(&verifier));
        q.append_pair("code_challenge_method", "S256");
        q.append_pair("state", &state);
        q.append_pair("resource", &server.resource);
        if !scopes.is_empty() {
            q.append_pair("scope", &scopes.join(" "));
        }
    }
    let callback = match &config.authorizer {
        Authorizer::Headless => follow_once(&url, config.http_timeout).await?,
        Authorizer::Callback(visit) => {
            let visit = visit.clone();
            let target = url.to_string();
            let step = tokio::task::spawn_blocking(move || visit(&target));
            tokio::time::timeout(config.user_timeout, step)
                .await
                .map_err(|_| fail(OAuthStep::Authorization, "the user did not come back in time"))?
                .map_err(|e| fail_with(OAuthStep::Authorization, String::new(), e))?
                .map_err(|e| fail(OAuthStep::Authorization, e))?
        }
    };
    let callback = Url::parse(&callback)
        .map_err(|e| fail_with(OAuthStep::Authorization, format!("redirect {callback:?}"), e))?;
    let param =
        |name: &str| callback.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned());
    if let Some(error) = param("error") {
        return Err(fail(
            OAuthStep::Authorization,
            format!("the authorization server answered {error}"),
        ));
    }
    if param("state").as_deref() != Some(state.as_str()) {
        return Err(fail(OAuthStep::Authorization, "the redirect's state is not the one sent"));
    }
    // RFC 9207: when the server says it sends `iss`, it must, and it must be its issuer.
    match (param("iss"), server.iss_supported) {
        (Some(iss), _) if iss != server.issuer => {
            return Err(fail(
                OAuthStep::Authorization,
                format!("the redirect's iss {iss:?} is not the issuer {:?}", server.issuer),
            ));
        }
        (None, true) => {
            return Err(fail(
                OAuthStep::Authorization,
                "the redirect lacks the iss the server promised",
            ));
        }
        _ => {}
    }
    let code =
        param("code").ok_or_else(|| fail(OAuthStep::Authorization, "no code in the redirect"))?;
    let mut form = vec![
        ("grant_type", "authorization_code".to_owned()),
        ("code", code),
        ("redirect_uri", config.redirect_uri.clone()),
        ("code_verifier", verifier),
        ("resource", server.resource.clone()),
    ];
    let mut request = client.post(server.token_endpoint.clone()).timeout(config.http_timeout);
    match (server.auth_method.as_str(), &server.client_secret) {
        ("client_secret_basic", Some(secret)) => {
            let encode =
                |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            let pair = format!("{}:{}", encode(&server.client_id), encode(secret));
            let basic = base64::engine::general_purpose::STANDARD.encode(pair);
            request = request.header(AUTHORIZATION, format!("Basic {basic}"));
        }
        ("client_secret_post", Some(secret)) => {
            form.push(("client_id", server.client_id.clone()));
            form.push(("client_secret", secret.clone()));
        }
        _ => form.push(("client_id", server.client_id.clone())),
    }
    let response = request
        .form(&form)
        .send()
        .await
        .map_err(|e| fail_with(OAuthStep::Token, String::new(), e))?;
    let status = response.status();
    let answer = json_body(response, OAuthStep::Token).await?;
    if !status.is_success() {
        return Err(fail(OAuthStep::Token, format!("HTTP {status}: {answer}")));
    }
    answer["access_token"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| fail(OAuthStep::Token, "no access_token in the token answer"))
}

/// A response's JSON body (an empty or non-JSON one reads as `null`).
async fn json_body(response: Response, step: OAuthStep) -> Result<Value, TransportError> {
    let bytes = response.bytes().await.map_err(|e| fail_with(step, String::new(), e))?;
    Ok(serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

/// GETs `url` without following redirects and returns where it redirects to.
async fn follow_once(url: &Url, timeout: std::time::Duration) -> Result<String, TransportError> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(timeout)
        .build()
        .map_err(|e| fail_with(OAuthStep::Authorization, String::new(), e))?;
    let response: Response = client
        .get(url.clone())
        .send()
        .await
        .map_err(|e| fail_with(OAuthStep::Authorization, String::new(), e))?;
    if !response.status().is_redirection() {
        return Err(fail(
            OAuthStep::Authorization,
            format!(
                "the authorization endpoint answered HTTP {} instead of a redirect",
                response.status()
            ),
        ));
    }
    let location = response
        .headers()
        .get(LOCATION)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| fail(OAuthStep::Authorization, "a redirect without Location"))?;
    Ok(url
        .join(location)
        .map_err(|e| fail_with(OAuthStep::Authorization, String::new(), e))?
        .to_string())
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
