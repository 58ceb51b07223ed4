//! Semantic tool routing: only the few tools relevant to a request reach the model's context.
//! Sans-IO: the embedder's table arrives as bytes (`host::embedding::load_table` reads the file).
//!
//! - [`lexical`]: identifier-aware terms and a BM25 index;
//! - [`embed`]: the pluggable [`embed::Embedder`], the static MiniLM table that ships as one,
//!   and the vector index;
//! - [`bert`]: the full BERT encoder (all-MiniLM-L6-v2 from local weights) as another;
//! - [`find`]: `ringmcp__find_tools`, tool search with the model in the loop;
//! - [`router`]: the catalog, the fusion of both rankings with name boosts and diversity across
//!   servers, and the token cost of the result;
//! - [`steps`]: the steps of a request that names several, each routed on its own;
//! - [`tokens`]: BPE token counts (o200k_base);
//! - [`par`]: independent work (indexing new tools, encoding) spread over the cores;
//! - [`values`]: the values a request carries (paths, URLs, commits, issue keys…), the
//!   parameters that take them, and developers' shorthand spelt out.
//!
//! Both indexes are kept per server, so one server's `list_changed` re-indexes only it. See
//! docs/routing.md.

#![forbid(unsafe_code)]

pub mod bert;
pub mod embed;
pub mod find;
pub mod lexical;
pub(crate) mod par;
pub mod router;
pub mod steps;
pub mod tokens;
pub mod values;
mod weights;

pub use bert::BertEmbedder;
pub use embed::{Embedder, StaticEmbedder};
pub use router::{CatalogEntry, Ranker, Routed, Router, Routing, Weights};
