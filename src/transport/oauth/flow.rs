//! The authorization-code flow with PKCE: the user's step (or the headless redirect), the
//! redirect's checks, the token exchange.

use base64::Engine;
use reqwest::header::{AUTHORIZATION, LOCATION};
use reqwest::{Response, Url};
use serde_json::Value;

use super::{Authorizer, OAuthConfig, Server, fail, fail_with};
use crate::transport::TransportError;
use crate::transport::error::OAuthStep;

pub(super) fn random_token(bytes: usize) -> Result<String, TransportError> {
    use ring::rand::SecureRandom;
    let mut buf = vec![0u8; bytes];
    ring::rand::SystemRandom::new()
        .fill(&mut buf)
        .map_err(|_| fail(OAuthStep::Pkce, "no system randomness"))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(buf))
}

pub(super) fn s256(verifier: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest.as_ref())
}

/// The authorization-code flow with PKCE; returns the access token.
pub(super) async fn code_flow(
    client: &reqwest::Client,
    config: &OAuthConfig,
    server: &Server,
    scopes: &[String],
) -> Result<String, TransportError> {
    let verifier = random_token(48)?;
    let state = random_token(24)?;
    let url = authorization_url(config, server, scopes, &verifier, &state);
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
    let code = code_of(&callback, &state, server)?;
    redeem(client, config, server, code, verifier).await
}

/// The authorization URL the user visits: PKCE S256, the state, the RFC 8707 resource, the
/// scopes.
fn authorization_url(
    config: &OAuthConfig,
    server: &Server,
    scopes: &[String],
    verifier: &str,
    state: &str,
) -> Url {
    let mut url = server.authorization_endpoint.clone();
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("response_type", "code");
        q.append_pair("client_id", &server.client_id);
        q.append_pair("redirect_uri", &config.redirect_uri);
        q.append_pair("code_challenge", &s256(verifier));
        q.append_pair("code_challenge_method", "S256");
        q.append_pair("state", state);
        q.append_pair("resource", &server.resource);
        if !scopes.is_empty() {
            q.append_pair("scope", &scopes.join(" "));
        }
    }
    url
}

/// The code in the redirect the browser was sent to, once its `state` and (RFC 9207) `iss`
/// check out.
fn code_of(callback: &str, state: &str, server: &Server) -> Result<String, TransportError> {
    let callback = Url::parse(callback)
        .map_err(|e| fail_with(OAuthStep::Authorization, format!("redirect {callback:?}"), e))?;
    let param =
        |name: &str| callback.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned());
    if let Some(error) = param("error") {
        return Err(fail(
            OAuthStep::Authorization,
            format!("the authorization server answered {error}"),
        ));
    }
    if param("state").as_deref() != Some(state) {
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
    param("code").ok_or_else(|| fail(OAuthStep::Authorization, "no code in the redirect"))
}

/// Exchanges the code for an access token at the token endpoint, authenticating the client
/// as it registered.
async fn redeem(
    client: &reqwest::Client,
    config: &OAuthConfig,
    server: &Server,
    code: String,
    verifier: String,
) -> Result<String, TransportError> {
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
pub(super) async fn json_body(
    response: Response,
    step: OAuthStep,
) -> Result<Value, TransportError> {
    let bytes = response.bytes().await.map_err(|e| fail_with(step, String::new(), e))?;
    Ok(serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

/// GETs `url` without following redirects and returns where it redirects to.
pub(super) async fn follow_once(
    url: &Url,
    timeout: std::time::Duration,
) -> Result<String, TransportError> {
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
