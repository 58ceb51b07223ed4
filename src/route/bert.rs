//! A BERT-family sentence encoder in pure Rust: the full transformer behind the router's
//! semantic half, for users who point ringmcp at local weights (a sentence-transformers folder:
//! `config.json`, `model.safetensors`, `vocab.txt`). Two layouts:
//!
//! - BERT (all-MiniLM-L6-v2 and its kin): learned absolute positions from 0, a token-type row,
//!   `[CLS] … [SEP]`;
//! - MPNet (all-mpnet-base-v2): BERT's layer layout under other tensor names, no token types,
//!   positions that start after the padding index, `<s> … </s>`, and a relative-position bias
//!   added to every head's attention scores (32 buckets up to a distance of 128, one table shared
//!   by all layers).
//!
//! Mean pooling over the last layer, then unit length: what sentence-transformers computes for
//! these models. f32 weights, matrix products by `ndarray` (matrixmultiply's SGEMM kernels); a
//! batch of texts is spread over the machine's cores. Sans-IO: it is built from the files'
//! bytes (`host::embedding::load_model` reads them). Costs and gains against the static table are
//! in PERFORMANCE.md ("Tool routing"); see docs/routing.md.

#![forbid(unsafe_code)]

use ndarray::{Array1, Array2, Axis, Slice};
use safetensors::{Dtype, SafeTensors};
use serde::Deserialize;

use super::embed::{Embedder, WordPiece, normalize};

/// Longest input in tokens, the markers included, unless the folder says otherwise
/// ([`BertEmbedder::with_max_tokens`]; sentence-transformers' limit for MiniLM). The rest of a
/// long tool description is cut.
const MAX_TOKENS: usize = 256;

/// The relative-position bias of MPNet: distances past this share the last bucket.
const MAX_DISTANCE: f32 = 128.0;

/// Which layout the weights follow (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Bert,
    MpNet,
}

/// What of `config.json` the encoder needs (a Hugging Face BERT or MPNet configuration).
#[derive(Debug, Clone, Deserialize)]
struct Config {
    hidden_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    intermediate_size: usize,
    max_position_embeddings: usize,
    #[serde(default = "default_eps")]
    layer_norm_eps: f32,
    #[serde(default)]
    hidden_act: Option<String>,
    #[serde(default)]
    model_type: Option<String>,
    /// MPNet: the padding token's id, after which positions start.
    #[serde(default = "default_pad")]
    pad_token_id: usize,
    /// MPNet: buckets of the relative-position bias.
    #[serde(default = "default_buckets")]
    relative_attention_num_buckets: usize,
}

impl Config {
    fn family(&self) -> Family {
        if self.model_type.as_deref() == Some("mpnet") { Family::MpNet } else { Family::Bert }
    }

    /// The position-table row of the first token.
    fn first_position(&self) -> usize {
        match self.family() {
            Family::Bert => 0,
            Family::MpNet => self.pad_token_id.saturating_add(1),
        }
    }
}

fn default_pad() -> usize {
    1
}

fn default_buckets() -> usize {
    32
}

fn default_eps() -> f32 {
    1e-12
}

/// Why a model folder could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// `config.json` is not a BERT or MPNet configuration this encoder runs.
    #[error("config.json: {0}")]
    Config(String),
    /// `model.safetensors` is malformed or lacks a tensor.
    #[error("model.safetensors: {0}")]
    Weights(String),
    /// `vocab.txt` does not fit the weights.
    #[error("vocab.txt: {0}")]
    Vocab(String),
}

struct Norm {
    w: Array1<f32>,
    b: Array1<f32>,
}

struct Layer {
    /// Query, key and value projections side by side: `hidden × 3·hidden`.
    qkv: Array2<f32>,
    qkv_b: Array1<f32>,
    out: Array2<f32>,
    out_b: Array1<f32>,
    attn_norm: Norm,
    up: Array2<f32>,
    up_b: Array1<f32>,
    down: Array2<f32>,
    down_b: Array1<f32>,
    ffn_norm: Norm,
}

/// The encoder (see the module docs).
pub struct BertEmbedder {
    name: String,
    cfg: Config,
    tokenizer: WordPiece,
    word: Array2<f32>,
    position: Array2<f32>,
    /// BERT's token-type row 0 (every token is of type 0); MPNet has none.
    token_type: Option<Array1<f32>>,
    emb_norm: Norm,
    layers: Vec<Layer>,
    /// MPNet's relative-position bias: `buckets × heads`.
    relative: Option<Array2<f32>>,
    /// The markers around a text (`[CLS]`/`[SEP]`, `<s>`/`</s>`).
    cls: u32,
    sep: u32,
    max_tokens: usize,
}

impl std::fmt::Debug for BertEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BertEmbedder")
            .field("name", &self.name)
            .field("layers", &self.cfg.num_hidden_layers)
            .field("hidden", &self.cfg.hidden_size)
            .field("family", &self.cfg.family())
            .finish_non_exhaustive()
    }
}

/// `config.json`, checked: a BERT or MPNet encoder with GELU and plausible sizes.
fn checked_config(config: &[u8]) -> Result<Config, ModelError> {
    let cfg: Config =
        serde_json::from_slice(config).map_err(|e| ModelError::Config(e.to_string()))?;
    if cfg.model_type.as_deref().is_some_and(|t| t != "bert" && t != "mpnet") {
        return Err(ModelError::Config(format!(
            "model_type {:?}: only BERT and MPNet encoders are supported",
            cfg.model_type.as_deref().unwrap_or_default()
        )));
    }
    if cfg.hidden_act.as_deref().is_some_and(|a| a != "gelu") {
        return Err(ModelError::Config("hidden_act: only gelu is supported".into()));
    }
    if cfg.hidden_size == 0
        || cfg.hidden_size > 8192
        || cfg.intermediate_size == 0
        || cfg.num_hidden_layers == 0
        || cfg.num_hidden_layers > 128
        || cfg.max_position_embeddings < cfg.first_position().saturating_add(3)
        || cfg.max_position_embeddings > 1 << 16
        || cfg.relative_attention_num_buckets < 4
        || cfg.relative_attention_num_buckets > 1024
    {
        return Err(ModelError::Config(
            "implausible sizes (hidden_size, intermediate_size, num_hidden_layers, \
                 max_position_embeddings, pad_token_id, relative_attention_num_buckets)"
                .into(),
        ));
    }
    if cfg.num_attention_heads == 0 || !cfg.hidden_size.is_multiple_of(cfg.num_attention_heads) {
        return Err(ModelError::Config(
            "hidden_size is not a multiple of num_attention_heads".into(),
        ));
    }
    Ok(cfg)
}

/// A model's tensors, read as the shapes the encoder wants (f32; a `bert.` or `mpnet.` prefix
/// accepted).
struct Tensors<'a>(&'a SafeTensors<'a>);

impl Tensors<'_> {
    fn view(&self, name: &str) -> Option<safetensors::tensor::TensorView<'_>> {
        let st = self.0;
        (st.tensor(name).ok())
            .or_else(|| st.tensor(&format!("bert.{name}")).ok())
            .or_else(|| st.tensor(&format!("mpnet.{name}")).ok())
    }

    fn tensor(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, ModelError> {
        let t = self.view(name).ok_or_else(|| ModelError::Weights(format!("no tensor {name}")))?;
        if t.dtype() != Dtype::F32 {
            return Err(ModelError::Weights(format!("{name}: {:?}, want F32", t.dtype())));
        }
        if t.shape() != shape {
            return Err(ModelError::Weights(format!(
                "{name}: shape {:?}, want {shape:?}",
                t.shape()
            )));
        }
        Ok(t.data().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
    }

    fn vector(&self, name: &str, n: usize) -> Result<Array1<f32>, ModelError> {
        self.tensor(name, &[n]).map(Array1::from)
    }

    fn matrix(&self, name: &str, rows: usize, cols: usize) -> Result<Array2<f32>, ModelError> {
        self.tensor(name, &[rows, cols])
            .map(|v| Array2::from_shape_vec((rows, cols), v).expect("shape checked"))
    }

    /// A linear layer stored as PyTorch does (out × in), turned for `x · W`.
    fn linear(
        &self,
        name: &str,
        inp: usize,
        out: usize,
    ) -> Result<(Array2<f32>, Array1<f32>), ModelError> {
        let w = self.matrix(&format!("{name}.weight"), out, inp)?;
        Ok((
            w.reversed_axes().as_standard_layout().to_owned(),
            self.vector(&format!("{name}.bias"), out)?,
        ))
    }

    fn norm(&self, name: &str, h: usize) -> Result<Norm, ModelError> {
        Ok(Norm {
            w: self.vector(&format!("{name}.weight"), h)?,
            b: self.vector(&format!("{name}.bias"), h)?,
        })
    }

    /// Encoder layer `p` (`encoder.layer.N`): attention (query, key and value fused), its
    /// output and norm, the feed-forward pair and its norm. The same layer in both families,
    /// under other names.
    fn layer(&self, family: Family, p: &str, h: usize, ffn: usize) -> Result<Layer, ModelError> {
        let [query, key, value, output, attn_norm] = match family {
            Family::Bert => [
                "attention.self.query",
                "attention.self.key",
                "attention.self.value",
                "attention.output.dense",
                "attention.output.LayerNorm",
            ],
            Family::MpNet => [
                "attention.attn.q",
                "attention.attn.k",
                "attention.attn.v",
                "attention.attn.o",
                "attention.LayerNorm",
            ],
        };
        let (q, qb) = self.linear(&format!("{p}.{query}"), h, h)?;
        let (k, kb) = self.linear(&format!("{p}.{key}"), h, h)?;
        let (v, vb) = self.linear(&format!("{p}.{value}"), h, h)?;
        let qkv =
            ndarray::concatenate(Axis(1), &[q.view(), k.view(), v.view()]).expect("same rows");
        let qkv_b = ndarray::concatenate(Axis(0), &[qb.view(), kb.view(), vb.view()]).expect("1-d");
        let (out, out_b) = self.linear(&format!("{p}.{output}"), h, h)?;
        let (up, up_b) = self.linear(&format!("{p}.intermediate.dense"), h, ffn)?;
        let (down, down_b) = self.linear(&format!("{p}.output.dense"), ffn, h)?;
        Ok(Layer {
            qkv,
            qkv_b,
            out,
            out_b,
            attn_norm: self.norm(&format!("{p}.{attn_norm}"), h)?,
            up,
            up_b,
            down,
            down_b,
            ffn_norm: self.norm(&format!("{p}.output.LayerNorm"), h)?,
        })
    }
}

impl BertEmbedder {
    /// Builds the encoder from a model folder's files: `config.json` (`model_type` `bert` or
    /// `mpnet`), `model.safetensors` (f32) and `vocab.txt` (one WordPiece token per line, in id
    /// order). `name` is what reports call it. Uncased models (no ASCII upper-case letter in the
    /// vocabulary outside `[SPECIAL]` and `<special>` tokens) lower-case their input.
    pub fn from_parts(
        name: &str,
        config: &[u8],
        weights: &[u8],
        vocab: &str,
    ) -> Result<Self, ModelError> {
        let cfg = checked_config(config)?;
        let st =
            SafeTensors::deserialize(weights).map_err(|e| ModelError::Weights(e.to_string()))?;
        let h = cfg.hidden_size;
        let t = Tensors(&st);
        let tokens: Vec<String> = vocab.lines().map(str::to_owned).collect();
        let vocab_rows = tokens.len();
        let word = t.matrix("embeddings.word_embeddings.weight", vocab_rows, h).map_err(|e| {
            ModelError::Vocab(format!("{} tokens do not fit the weights ({e})", vocab_rows))
        })?;
        let position =
            t.matrix("embeddings.position_embeddings.weight", cfg.max_position_embeddings, h)?;
        let family = cfg.family();
        let token_type = match family {
            Family::Bert => {
                let name = "embeddings.token_type_embeddings.weight";
                let types = (t.view(name).and_then(|t| t.shape().first().copied()))
                    .filter(|n| *n > 0)
                    .unwrap_or(2);
                Some(t.matrix(name, types, h)?.row(0).to_owned())
            }
            Family::MpNet => None,
        };
        let relative = match family {
            Family::Bert => None,
            Family::MpNet => Some(t.matrix(
                "encoder.relative_attention_bias.weight",
                cfg.relative_attention_num_buckets,
                cfg.num_attention_heads,
            )?),
        };
        let emb_norm = t.norm("embeddings.LayerNorm", h)?;
        let layers = (0..cfg.num_hidden_layers)
            .map(|i| t.layer(family, &format!("encoder.layer.{i}"), h, cfg.intermediate_size))
            .collect::<Result<Vec<_>, _>>()?;
        // [CLS], [unused0], <s>, <mask>, …
        let special = |t: &str| {
            (t.starts_with('[') && t.ends_with(']')) || (t.starts_with('<') && t.ends_with('>'))
        };
        let lowercase =
            !tokens.iter().any(|t| !special(t) && t.bytes().any(|b| b.is_ascii_uppercase()));
        let tokenizer = WordPiece::new(tokens, lowercase);
        let id =
            |t: &str| tokenizer.id(t).ok_or_else(|| ModelError::Vocab(format!("no {t} token")));
        let (cls, sep) = match family {
            Family::Bert => (id("[CLS]")?, id("[SEP]")?),
            Family::MpNet => (id("<s>")?, id("</s>")?),
        };
        let max_tokens = MAX_TOKENS.min(cfg.max_position_embeddings - cfg.first_position());
        Ok(BertEmbedder {
            name: name.to_owned(),
            cfg,
            tokenizer,
            word,
            position,
            token_type,
            emb_norm,
            layers,
            relative,
            cls,
            sep,
            max_tokens,
        })
    }

    /// The same encoder cutting texts at `tokens` tokens, the markers included: the folder's
    /// own limit (`max_seq_length` in `sentence_bert_config.json`), held to what the position
    /// table allows.
    #[must_use]
    pub fn with_max_tokens(mut self, tokens: usize) -> Self {
        let room = self.cfg.max_position_embeddings - self.cfg.first_position();
        self.max_tokens = tokens.clamp(3, room);
        self
    }

    /// The token ids the encoder sees for `text` (`[CLS] … [SEP]` or `<s> … </s>`, cut to the
    /// model's limit).
    pub fn token_ids(&self, text: &str) -> Vec<u32> {
        let mut ids = vec![self.cls];
        ids.extend(self.tokenizer.token_ids(text).into_iter().take(self.max_tokens - 2));
        ids.push(self.sep);
        ids
    }

    /// MPNet's relative-position bias for `n` tokens, one `n × n` matrix a head (`None` for
    /// BERT).
    fn position_bias(&self, n: usize) -> Option<Vec<Array2<f32>>> {
        let table = self.relative.as_ref()?;
        let buckets = self.cfg.relative_attention_num_buckets;
        let bucket = Array2::from_shape_fn((n, n), |(i, j)| relative_bucket(i, j, buckets));
        Some(
            (0..self.cfg.num_attention_heads)
                .map(|head| bucket.mapv(|b| table[[b, head]]))
                .collect(),
        )
    }

    /// The pooled, unit-length embedding of one token sequence.
    fn encode(&self, ids: &[u32]) -> Vec<f32> {
        let (n, h) = (ids.len(), self.cfg.hidden_size);
        let heads = self.cfg.num_attention_heads;
        let hd = h / heads;
        let mut x = Array2::<f32>::zeros((n, h));
        let first = self.cfg.first_position();
        for (i, &id) in ids.iter().enumerate() {
            let mut row = x.row_mut(i);
            row += &self.word.row(id as usize);
            row += &self.position.row(first + i);
            if let Some(token_type) = &self.token_type {
                row += token_type;
            }
        }
        layer_norm(&mut x, &self.emb_norm, self.cfg.layer_norm_eps);
        let bias = self.position_bias(n);
        let scale = 1.0 / (hd as f32).sqrt();
        for l in &self.layers {
            let qkv = x.dot(&l.qkv) + &l.qkv_b;
            let mut ctx = Array2::<f32>::zeros((n, h));
            for head in 0..heads {
                // (The `s!` macro would carry an `allow(unsafe_code)` into this module.)
                let cols = |from: usize| Slice::from(from + head * hd..from + (head + 1) * hd);
                let q = qkv.slice_axis(Axis(1), cols(0));
                let k = qkv.slice_axis(Axis(1), cols(h));
                let v = qkv.slice_axis(Axis(1), cols(2 * h));
                let mut scores = q.dot(&k.t()) * scale;
                if let Some(bias) = &bias {
                    scores += &bias[head];
                }
                softmax_rows(&mut scores);
                ctx.slice_axis_mut(Axis(1), cols(0)).assign(&scores.dot(&v));
            }
            let mut a = ctx.dot(&l.out) + &l.out_b + &x;
            layer_norm(&mut a, &l.attn_norm, self.cfg.layer_norm_eps);
            let mut up = a.dot(&l.up) + &l.up_b;
            up.mapv_inplace(gelu);
            let mut y = up.dot(&l.down) + &l.down_b + &a;
            layer_norm(&mut y, &l.ffn_norm, self.cfg.layer_norm_eps);
            x = y;
        }
        let mut pooled = x.mean_axis(Axis(0)).expect("at least [CLS] and [SEP]").to_vec();
        normalize(&mut pooled);
        pooled
    }
}

impl Embedder for BertEmbedder {
    fn dim(&self) -> usize {
        self.cfg.hidden_size
    }

    fn embed(&self, text: &str) -> Vec<f32> {
        self.encode(&self.token_ids(text))
    }

    fn embed_batch(&self, texts: &[String]) -> Vec<Vec<f32>> {
        // Longest first, handed out one at a time: the threads finish together.
        let mut order: Vec<(usize, Vec<u32>)> =
            texts.iter().map(|t| self.token_ids(t)).enumerate().collect();
        order.sort_by_key(|(_, ids)| std::cmp::Reverse(ids.len()));
        let vectors = super::par::map(&order, 1, |(_, ids)| self.encode(ids));
        let mut out = vec![Vec::new(); texts.len()];
        for ((i, _), v) in order.iter().zip(vectors) {
            out[*i] = v;
        }
        out
    }

    fn name(&self) -> &str {
        &self.name
    }
}

/// MPNet's bucket for query `i` and key `j` (T5's scheme, both directions): keys after the query
/// take the upper half; each half gives one bucket a distance below a quarter of the buckets,
/// then buckets logarithmic in the distance up to [`MAX_DISTANCE`], past which all share the
/// last. In f32, as the reference computes it, so the rounding at the boundaries agrees.
fn relative_bucket(i: usize, j: usize, buckets: usize) -> usize {
    let half = buckets / 2;
    let exact = half / 2;
    let side = if j > i { half } else { 0 };
    let distance = i.abs_diff(j);
    if distance < exact {
        return side + distance;
    }
    let span = (f64::from(MAX_DISTANCE) / exact as f64).ln() as f32;
    let log = (distance as f32 / exact as f32).ln() / span * (half - exact) as f32;
    side + (exact + log as usize).min(half - 1)
}

/// Layer normalisation of each row, in place.
fn layer_norm(x: &mut Array2<f32>, n: &Norm, eps: f32) {
    for mut row in x.rows_mut() {
        let len = row.len() as f32;
        let mean = row.sum() / len;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / len;
        let inv = 1.0 / (var + eps).sqrt();
        for ((v, w), b) in row.iter_mut().zip(&n.w).zip(&n.b) {
            *v = (*v - mean) * inv * w + b;
        }
    }
}

/// Softmax of each row, in place.
fn softmax_rows(x: &mut Array2<f32>) {
    for mut row in x.rows_mut() {
        let max = row.fold(f32::MIN, |m, v| m.max(*v));
        row.mapv_inplace(|v| (v - max).exp());
        let sum = row.sum();
        row /= sum;
    }
}

/// BERT's exact GELU, `x · Φ(x)`.
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x / std::f32::consts::SQRT_2))
}

/// The error function (Abramowitz and Stegun 7.1.26, absolute error below 1.5e-7).
fn erf(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = t
        * (0.254_829_6
            + t * (-0.284_496_74 + t * (1.421_413_8 + t * (-1.453_152_1 + t * 1.061_405_4))));
    (1.0 - poly * (-a * a).exp()).copysign(x)
}

#[cfg(test)]
mod tests;
