//! Semantic tool routing (issue 16, in progress): only the few tools relevant to a request
//! reach the model's context. Sans-IO. So far: the lexical index ([`lexical`]: identifier-aware
//! terms and BM25, replaceable one server at a time); the semantic index, the fusion and the
//! token accounting are to come.

#![forbid(unsafe_code)]

pub mod lexical;
