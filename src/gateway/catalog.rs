//! The merged view of every backend's lists: upstream tools and prompts under their
//! namespaced names, resources under their own URIs (rewritten only when two backends claim the
//! same one), and the routing tables that take an upstream name or URI back to its backend
//! (docs/gateway.md, "Names" and "Resources"). Pure: built from lists, no I/O.

#![forbid(unsafe_code)]

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::jsonrpc::{ErrorObject, codes};
use crate::policy::glob_matches;
use crate::protocol::{Prompt, Resource, Tool};

use super::names::{NameTable, Target};

/// The scheme of URIs the gateway rewrote to tell two backends' resources apart:
/// `ringmcp-gateway://SERVER/ORIGINAL`.
pub const GATEWAY_SCHEME: &str = "ringmcp-gateway://";

/// The backend index of the gateway's own items (`ringmcp__status`).
pub const OWN: usize = usize::MAX;

/// A backend's `"tools"` filter: which of its tools are exposed (globs; deny wins).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolFilter {
    /// Only these (absent: all).
    #[serde(default)]
    pub allow: Option<Vec<String>>,
    /// Never these.
    #[serde(default)]
    pub deny: Vec<String>,
}

impl ToolFilter {
    /// Whether tool `name` is exposed.
    pub fn exposes(&self, name: &str) -> bool {
        let allowed = self.allow.as_ref().is_none_or(|a| a.iter().any(|g| glob_matches(g, name)));
        allowed && !self.deny.iter().any(|g| glob_matches(g, name))
    }
}

/// One backend's lists, as the catalog is built from them.
#[derive(Debug, Clone, Copy)]
pub struct Lists<'a> {
    /// The backend's name (the prefix).
    pub server: &'a str,
    /// Its tool filter.
    pub filter: &'a ToolFilter,
    /// Its tools.
    pub tools: &'a [Tool],
    /// Its prompts.
    pub prompts: &'a [Prompt],
    /// Its resources.
    pub resources: &'a [Resource],
    /// Its resource templates (raw).
    pub templates: &'a [Value],
}

/// How names are made.
#[derive(Debug, Clone)]
pub struct Naming {
    /// Between server and item.
    pub separator: String,
    /// `false` (`--no-prefix`, one backend): items keep their names.
    pub prefix: bool,
}

/// The merged lists and their routing tables.
#[derive(Debug, Default, Clone)]
pub struct Catalog {
    tools: Vec<Value>,
    tool_names: NameTable,
    prompts: Vec<Value>,
    prompt_names: NameTable,
    resources: Vec<Value>,
    /// Upstream URI → backend and its URI.
    uris: HashMap<String, Target>,
    templates: Vec<Value>,
    /// Each template's backend and the literal text its URIs start with.
    template_owners: Vec<(usize, String)>,
    /// Backends' names, by index.
    servers: Vec<String>,
}

impl Catalog {
    /// Merges `backends` (index = position) after the gateway's own `own_tools`.
    pub fn build(naming: &Naming, own_tools: &[Value], backends: &[Option<Lists<'_>>]) -> Self {
        let mut c = Catalog {
            servers: backends.iter().map(|b| b.map_or("", |l| l.server).to_owned()).collect(),
            ..Catalog::default()
        };
        for tool in own_tools {
            let name = tool["name"].as_str().unwrap_or_default();
            if c.tool_names.insert(None, OWN, name).is_some() {
                c.tools.push(tool.clone());
            }
        }
        let sep = naming.separator.as_str();
        let mut claims: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, lists) in backends.iter().enumerate() {
            let Some(l) = lists else { continue };
            let prefix = naming.prefix.then_some((l.server, sep));
            for tool in l.tools.iter().filter(|t| l.filter.exposes(&t.name)) {
                let Some(up) = c.tool_names.insert(prefix, i, &tool.name) else { continue };
                let mut value = serde_json::to_value(tool).expect("tools serialise");
                value["name"] = json!(up);
                c.tools.push(value);
            }
            for prompt in l.prompts {
                let Some(up) = c.prompt_names.insert(prefix, i, &prompt.name) else { continue };
                let mut value = serde_json::to_value(prompt).expect("prompts serialise");
                value["name"] = json!(up);
                c.prompts.push(value);
            }
            for r in l.resources {
                claims.entry(r.uri.as_str()).or_default().push(i);
            }
        }
        for (i, lists) in backends.iter().enumerate() {
            let Some(l) = lists else { continue };
            for r in l.resources {
                let shared = claims.get(r.uri.as_str()).is_some_and(|owners| owners.len() > 1);
                let up = if shared {
                    format!("{GATEWAY_SCHEME}{}/{}", l.server, r.uri)
                } else {
                    r.uri.clone()
                };
                if c.uris.contains_key(&up) {
                    continue; // listed twice by one backend
                }
                let mut value = serde_json::to_value(r).expect("resources serialise");
                value["uri"] = json!(up);
                c.uris.insert(up, Target { backend: i, name: r.uri.clone() });
                c.resources.push(value);
            }
            for t in l.templates {
                let Some(template) = t.get("uriTemplate").and_then(Value::as_str) else {
                    continue;
                };
                let literal = template.split('{').next().unwrap_or_default().to_owned();
                c.template_owners.push((i, literal));
                c.templates.push(t.clone());
            }
        }
        c.disambiguate_templates();
        c
    }

    /// Templates whose literal starts are equal across backends are rewritten under the
    /// gateway scheme, so that reads of their URIs route by server.
    fn disambiguate_templates(&mut self) {
        let mut by_literal: HashMap<String, Vec<usize>> = HashMap::new();
        for (backend, literal) in &self.template_owners {
            by_literal.entry(literal.clone()).or_default().push(*backend);
        }
        for (k, (backend, literal)) in self.template_owners.iter_mut().enumerate() {
            let owners = &by_literal[literal.as_str()];
            if owners.iter().any(|b| b != backend) {
                let server = &self.servers[*backend];
                let template = self.templates[k]["uriTemplate"].as_str().unwrap_or_default();
                let rewritten = format!("{GATEWAY_SCHEME}{server}/{template}");
                self.templates[k]["uriTemplate"] = json!(rewritten);
                *literal = format!("{GATEWAY_SCHEME}{server}/{literal}");
            }
        }
    }

    /// The upstream tools.
    pub fn tools(&self) -> &[Value] {
        &self.tools
    }

    /// The upstream prompts.
    pub fn prompts(&self) -> &[Value] {
        &self.prompts
    }

    /// The upstream resources.
    pub fn resources(&self) -> &[Value] {
        &self.resources
    }

    /// The upstream resource templates.
    pub fn templates(&self) -> &[Value] {
        &self.templates
    }

    /// The backend tool an upstream tool name stands for.
    pub fn tool(&self, upstream: &str) -> Option<&Target> {
        self.tool_names.get(upstream)
    }

    /// The backend prompt an upstream prompt name stands for.
    pub fn prompt(&self, upstream: &str) -> Option<&Target> {
        self.prompt_names.get(upstream)
    }

    /// The upstream name of backend `backend`'s tool `name`, when it is exposed.
    pub fn upstream_tool(&self, backend: usize, name: &str) -> Option<&str> {
        self.tool_names
            .names()
            .iter()
            .find(|up| {
                self.tool_names.get(up).is_some_and(|t| t.backend == backend && t.name == name)
            })
            .map(String::as_str)
    }

    /// Which backend serves `uri`, and under which URI: a listed resource by the ownership
    /// table; a `ringmcp-gateway://SERVER/…` URI by its server; otherwise the backend whose
    /// template's literal start is the longest match; otherwise the only backend that lists
    /// resources or templates at all.
    ///
    /// # Errors
    /// -32002 when no backend (or more than one, equally) claims it.
    pub fn route_uri(&self, uri: &str) -> Result<Target, ErrorObject> {
        if let Some(t) = self.uris.get(uri) {
            return Ok(t.clone());
        }
        if let Some(rest) = uri.strip_prefix(GATEWAY_SCHEME) {
            for (i, server) in self.servers.iter().enumerate() {
                if let Some(original) =
                    rest.strip_prefix(server.as_str()).and_then(|r| r.strip_prefix('/'))
                    && !server.is_empty()
                {
                    return Ok(Target { backend: i, name: original.to_owned() });
                }
            }
        }
        let best = self
            .template_owners
            .iter()
            .filter(|(_, literal)| !literal.is_empty() && uri.starts_with(literal.as_str()))
            .map(|(b, literal)| (literal.len(), *b))
            .max();
        if let Some((len, backend)) = best {
            let tied = self
                .template_owners
                .iter()
                .any(|(b, l)| *b != backend && l.len() == len && uri.starts_with(l.as_str()));
            if !tied {
                return Ok(Target { backend, name: uri.to_owned() });
            }
        }
        let mut owners: Vec<usize> = self.uris.values().map(|t| t.backend).collect();
        owners.extend(self.template_owners.iter().map(|(b, _)| *b));
        owners.sort_unstable();
        owners.dedup();
        if let [only] = owners[..] {
            return Ok(Target { backend: only, name: uri.to_owned() });
        }
        Err(ErrorObject::new(
            codes::RESOURCE_NOT_FOUND,
            format!(
                "no backend of the gateway serves {uri:?}: list resources to see the URIs it knows"
            ),
        )
        .with_data(json!({ "uri": uri })))
    }

    /// The upstream URI of backend `backend`'s resource `uri` (for update notifications).
    pub fn upstream_uri(&self, backend: usize, uri: &str) -> String {
        self.uris
            .iter()
            .find(|(_, t)| t.backend == backend && t.name == uri)
            .map_or_else(|| uri.to_owned(), |(up, _)| up.clone())
    }
}

/// One page of `items` from `cursor` (an offset the previous page handed out, with the
/// fingerprint of the list it was an offset into).
///
/// # Errors
/// -32602 for a cursor this gateway did not hand out, or one into a list that has changed
/// since (an offset into another list would skip or repeat items): the client lists again.
pub fn page(
    items: &[Value],
    cursor: Option<&str>,
    size: usize,
) -> Result<(Vec<Value>, Option<String>), ErrorObject> {
    let tag = fingerprint(items);
    let start = match cursor {
        None => 0,
        Some(c) => {
            let (at, of) = c
                .strip_prefix("gw:")
                .and_then(|rest| rest.split_once(':'))
                .and_then(|(n, of)| Some((n.parse::<usize>().ok()?, of)))
                .filter(|(n, _)| *n <= items.len())
                .ok_or_else(|| {
                    ErrorObject::new(codes::INVALID_PARAMS, format!("Invalid cursor {c:?}"))
                })?;
            if of != tag {
                return Err(ErrorObject::new(
                    codes::INVALID_PARAMS,
                    format!(
                        "Invalid cursor {c:?}: the list changed since it was handed out; list again from the start"
                    ),
                ));
            }
            at
        }
    };
    let end = start.saturating_add(size.max(1)).min(items.len());
    let next = (end < items.len()).then(|| format!("gw:{end}:{tag}"));
    Ok((items[start..end].to_vec(), next))
}

/// What identifies a list's order: a hash of its items' names (tools, prompts) or URIs
/// (resources, templates), in order.
fn fingerprint(items: &[Value]) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for item in items {
        for key in ["name", "uri", "uriTemplate"] {
            item.get(key).and_then(Value::as_str).hash(&mut h);
        }
    }
    format!("{:016x}", h.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str) -> Tool {
        serde_json::from_value(json!({"name": name, "inputSchema": {"type": "object"}})).unwrap()
    }

    fn resource(uri: &str) -> Resource {
        serde_json::from_value(json!({"uri": uri, "name": uri})).unwrap()
    }

    fn naming() -> Naming {
        Naming { separator: "__".into(), prefix: true }
    }

    #[test]
    fn tools_are_namespaced_filtered_and_routed() {
        let all = ToolFilter::default();
        let only_read = ToolFilter { allow: Some(vec!["read_*".into()]), deny: vec![] };
        let (a, b) = ([tool("echo"), tool("add")], [tool("read_file"), tool("write_file")]);
        let lists = [
            Some(Lists {
                server: "ref",
                filter: &all,
                tools: &a,
                prompts: &[],
                resources: &[],
                templates: &[],
            }),
            None, // a backend that is down
            Some(Lists {
                server: "fs",
                filter: &only_read,
                tools: &b,
                prompts: &[],
                resources: &[],
                templates: &[],
            }),
        ];
        let own = [json!({"name": "ringmcp__status", "inputSchema": {"type": "object"}})];
        let c = Catalog::build(&naming(), &own, &lists);
        let names: Vec<&str> = c.tools().iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["ringmcp__status", "ref__echo", "ref__add", "fs__read_file"]);
        assert_eq!(c.tool("fs__read_file"), Some(&Target { backend: 2, name: "read_file".into() }));
        assert_eq!(c.tool("fs__write_file"), None);
        assert_eq!(c.tool("ringmcp__status").unwrap().backend, OWN);
        assert_eq!(c.upstream_tool(0, "add"), Some("ref__add"));
    }

    #[test]
    fn a_uri_two_backends_claim_is_told_apart_never_misrouted() {
        let f = ToolFilter::default();
        let (r1, r2) = ([resource("file:///a"), resource("mem://one")], [resource("file:///a")]);
        let t2 = [json!({"uriTemplate": "mem://{id}", "name": "m"})];
        let t1 = [
            json!({"uriTemplate": "mem://{id}", "name": "m"}),
            json!({"uriTemplate": "doc://x/{p}", "name": "d"}),
        ];
        let lists = [
            Some(Lists {
                server: "s1",
                filter: &f,
                tools: &[],
                prompts: &[],
                resources: &r1,
                templates: &t1,
            }),
            Some(Lists {
                server: "s2",
                filter: &f,
                tools: &[],
                prompts: &[],
                resources: &r2,
                templates: &t2,
            }),
        ];
        let c = Catalog::build(&naming(), &[], &lists);
        let uris: Vec<&str> = c.resources().iter().map(|r| r["uri"].as_str().unwrap()).collect();
        assert_eq!(
            uris,
            ["ringmcp-gateway://s1/file:///a", "mem://one", "ringmcp-gateway://s2/file:///a"]
        );
        assert_eq!(
            c.route_uri("mem://one").unwrap(),
            Target { backend: 0, name: "mem://one".into() }
        );
        assert_eq!(c.route_uri("ringmcp-gateway://s2/file:///a").unwrap().backend, 1);
        assert!(c.route_uri("file:///a").is_err(), "the shared URI itself is ambiguous");
        // Templates both claim "mem://": rewritten per server, and reads route by server.
        let templates: Vec<&str> =
            c.templates().iter().map(|t| t["uriTemplate"].as_str().unwrap()).collect();
        assert_eq!(
            templates,
            ["ringmcp-gateway://s1/mem://{id}", "doc://x/{p}", "ringmcp-gateway://s2/mem://{id}"]
        );
        assert_eq!(
            c.route_uri("ringmcp-gateway://s2/mem://7").unwrap(),
            Target { backend: 1, name: "mem://7".into() }
        );
        assert_eq!(c.route_uri("doc://x/readme").unwrap().backend, 0);
        assert!(c.route_uri("mem://7").is_err());
        assert!(c.route_uri("other://nothing").is_err());
        assert_eq!(c.upstream_uri(1, "file:///a"), "ringmcp-gateway://s2/file:///a");
    }

    #[test]
    fn pages_follow_the_cursor_and_refuse_strangers() {
        let items: Vec<Value> = (0..5).map(|i| json!(i)).collect();
        let (first, next) = page(&items, None, 2).unwrap();
        assert_eq!(first, [json!(0), json!(1)]);
        let (second, next) = page(&items, next.as_deref(), 2).unwrap();
        assert_eq!(second, [json!(2), json!(3)]);
        let (last, next) = page(&items, next.as_deref(), 2).unwrap();
        assert_eq!((last, next), (vec![json!(4)], None));
        assert_eq!(page(&items, Some("nope"), 2).unwrap_err().code, codes::INVALID_PARAMS);
        assert!(page(&items, Some("gw:99"), 2).is_err());
        assert!(page(&items, Some("gw:2"), 2).is_err(), "an offset without its list");
    }

    /// A list that changes between two pages (a backend restarted, a tool added before the
    /// cursor) would make an offset skip or repeat items: the old cursor is refused, saying
    /// to list again; a list whose definitions changed but not their order keeps its cursor.
    #[test]
    fn a_cursor_into_a_list_that_changed_is_refused() {
        let list = |names: &[&str]| -> Vec<Value> {
            names.iter().map(|n| json!({"name": n, "description": "d"})).collect()
        };
        let before = list(&["a", "b", "c", "d"]);
        let (first, next) = page(&before, None, 2).unwrap();
        assert_eq!(first.len(), 2);
        let after = list(&["a", "a2", "b", "c", "d"]);
        let e = page(&after, next.as_deref(), 2).unwrap_err();
        assert_eq!(e.code, codes::INVALID_PARAMS);
        assert!(e.message.contains("list again"), "{}", e.message);
        let mut redescribed = before.clone();
        redescribed[3]["description"] = json!("new");
        let (second, _) = page(&redescribed, next.as_deref(), 2).unwrap();
        assert_eq!(second, redescribed[2..4]);
    }

    #[test]
    fn filters_deny_over_allow() {
        let f = ToolFilter { allow: Some(vec!["*".into()]), deny: vec!["rm*".into()] };
        assert!(f.exposes("ls"));
        assert!(!f.exposes("rmdir"));
    }
}
