//! Information flow within a session: once the model has read content from an open-world tool
//! or content the scan flagged, it may be acting on someone else's instructions, so the tools
//! the policy counts as high-impact need a person's approval (or are refused) for the rest of
//! the session, whatever the policy allows otherwise. This is the session's state; the host
//! marks it and the policy reads it (`Policy::after_untrusted`).

/// What tainted a session first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaintSource {
    /// The server whose content it was.
    pub server: String,
    /// The tool (or `resources/read <uri>`).
    pub tool: String,
    /// Why it counts as untrusted (open-world tool, flagged sentence).
    pub why: String,
    /// The SHA-256 of the content, for the audit trail.
    pub digest: String,
}

impl std::fmt::Display for TaintSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} of server {:?} ({})", self.tool, self.server, self.why)
    }
}

/// A session's taint: clean until untrusted content arrives, then tainted for good (or until
/// the application clears it, say for a new conversation).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Taint {
    first: Option<TaintSource>,
    count: u64,
}

impl Taint {
    /// Records untrusted content; the first source is kept (later ones are counted).
    pub fn mark(&mut self, source: TaintSource) {
        self.count += 1;
        self.first.get_or_insert(source);
    }

    /// What tainted the session first, if anything did.
    pub fn source(&self) -> Option<&TaintSource> {
        self.first.as_ref()
    }

    /// How many untrusted contents the session has read.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Clean again (a new conversation).
    pub fn clear(&mut self) {
        *self = Taint::default();
    }
}
