//! The `WWW-Authenticate: Bearer …` challenge of a 401 or 403 (a leaf: the transport's errors
//! carry one).

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
