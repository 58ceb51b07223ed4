//! The fusion's weights: a user's request ([`Weights::default`]) and a query a model wrote
//! for `ringmcp__find_tools` ([`Weights::search`]); `ringmcp route --weights` parses them.

/// The fusion's knobs (defaults tuned on the development half of bench/route; see
/// docs/routing.md).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    /// Share of the lexical score in the fused one (the semantic share is `1 - lexical`).
    pub lexical: f32,
    /// Added to every tool of a server the query names ("github", "k8s").
    pub server_named: f32,
    /// Added to a tool whose own name the query contains ("read_file").
    pub tool_named: f32,
    /// Taken off per tool already chosen from the same server, unless the query names it:
    /// ambiguous queries see several servers' tools.
    pub diversity: f32,
    /// Added, in proportion, to a tool with parameters for the kinds of value the query holds
    /// (a path, a URL, a commit, … see [`super::values`]).
    pub values: f32,
}

impl std::str::FromStr for Weights {
    type Err = String;
    /// `lexical=0.2,server=0.25,tool=0.5,diversity=0.03,values=0.5`: any of them, the rest
    /// at their defaults.
    fn from_str(s: &str) -> Result<Self, String> {
        let mut w = Weights::default();
        for part in s.split(',').filter(|p| !p.trim().is_empty()) {
            let (key, value) =
                part.split_once('=').ok_or_else(|| format!("{part:?}: want NAME=NUMBER"))?;
            let v: f32 = value.trim().parse().map_err(|_| format!("{part:?}: not a number"))?;
            if !v.is_finite() || v < 0.0 {
                return Err(format!("{part:?}: weights are finite and not negative"));
            }
            match key.trim() {
                "lexical" if v <= 1.0 => w.lexical = v,
                "lexical" => return Err("lexical is a share: 0 to 1".into()),
                "server" => w.server_named = v,
                "tool" => w.tool_named = v,
                "diversity" => w.diversity = v,
                "values" => w.values = v,
                other => {
                    return Err(format!(
                        "unknown weight {other:?}: lexical, server, tool, diversity or values"
                    ));
                }
            }
        }
        Ok(w)
    }
}

impl Default for Weights {
    fn default() -> Self {
        Weights { lexical: 0.2, server_named: 0.25, tool_named: 0.5, diversity: 0.03, values: 0.5 }
    }
}

impl Weights {
    /// The weights of a query a model wrote for `ringmcp__find_tools` ([`Router::find`]): the
    /// action and the object, in the catalog's own words more often than a user's request, so
    /// the keywords count for more (chosen on the development split of the model-written
    /// queries, docs/routing.md "The model in the loop").
    pub fn search() -> Self {
        Weights { lexical: 0.65, ..Weights::default() }
    }
}
