//! Token counts with a real BPE vocabulary: OpenAI's o200k_base (GPT-4o and later), which the
//! `tiktoken-rs` crate bundles; nothing is fetched at run time. Never bytes/4.

#![forbid(unsafe_code)]

/// Tokens of `text` under o200k_base (special-token text counted as ordinary text).
pub fn count(text: &str) -> usize {
    tiktoken_rs::o200k_base_singleton().encode_ordinary(text).len()
}

/// The vocabulary's name, for reports.
pub const VOCABULARY: &str = "o200k_base";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_bpe_tokens_not_bytes() {
        assert_eq!(count(""), 0);
        assert_eq!(count("hello world"), 2);
        // A long word of one common piece is one token, far from len/4.
        let schema = r#"{"type":"object","properties":{"path":{"type":"string"}}}"#;
        let n = count(schema);
        assert!(n > 5 && n < schema.len() / 2, "{n}");
    }
}
