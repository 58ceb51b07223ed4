//! Finding the authorization server (RFC 9728 protected-resource metadata, RFC 8414 / OpenID
//! discovery) and a client id (pre-registered, a metadata document URL, or RFC 7591 dynamic
//! registration).

use reqwest::Url;
use serde::Deserialize;
use serde_json::json;

use super::flow::json_body;
use super::{Challenge, OAuthConfig, Server, fail, fail_with};
use crate::transport::TransportError;
use crate::transport::error::OAuthStep;

#[derive(Deserialize)]
pub(super) struct ProtectedResource {
    resource: Option<String>,
    #[serde(default)]
    authorization_servers: Vec<String>,
    #[serde(default)]
    scopes_supported: Vec<String>,
}

#[derive(Deserialize)]
pub(super) struct AuthServerMetadata {
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
pub(super) async fn get_json<T: serde::de::DeserializeOwned>(
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
pub(super) async fn first_found<T: serde::de::DeserializeOwned>(
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
pub(super) fn well_known(base: &Url, name: &str, with_path: bool) -> Url {
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
pub(super) fn canonical(url: &str) -> String {
    let mut u = url.trim().to_owned();
    if let Some(i) = u.find('#') {
        u.truncate(i);
    }
    while u.ends_with('/') {
        u.pop();
    }
    u
}

/// Protected-resource metadata, then the authorization server's metadata, then a client id.
pub(super) async fn discover(
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
pub(super) async fn register(
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
