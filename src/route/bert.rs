//! A BERT sentence encoder in pure Rust (all-MiniLM-L6-v2 and its kin): the full transformer
//! behind the router's semantic half, for users who point ringmcp at local weights (a
//! sentence-transformers folder: `config.json`, `model.safetensors`, `vocab.txt`).
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

/// Longest input in tokens, `[CLS]` and `[SEP]` included (sentence-transformers' limit for
/// MiniLM; the rest of a long tool description is cut).
const MAX_TOKENS: usize = 256;

/// What of `config.json` the encoder needs (a Hugging Face BERT configuration).
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
}

fn default_eps() -> f32 {
    1e-12
}

/// Why a model folder could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// `config.json` is not a BERT configuration this encoder runs.
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
    token_type: Array1<f32>,
    emb_norm: Norm,
    layers: Vec<Layer>,
    cls: u32,
    sep: u32,
}

impl std::fmt::Debug for BertEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BertEmbedder")
            .field("name", &self.name)
            .field("layers", &self.cfg.num_hidden_layers)
            .field("hidden", &self.cfg.hidden_size)
            .finish_non_exhaustive()
    }
}

/// `config.json`, checked: a BERT encoder with GELU and plausible sizes.
fn checked_config(config: &[u8]) -> Result<Config, ModelError> {
    let cfg: Config =
        serde_json::from_slice(config).map_err(|e| ModelError::Config(e.to_string()))?;
    if cfg.model_type.as_deref().is_some_and(|t| t != "bert") {
        return Err(ModelError::Config(format!(
            "model_type {:?}: only BERT encoders are supported",
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
        || cfg.max_position_embeddings < 3
    {
        return Err(ModelError::Config(
            "implausible sizes (hidden_size, intermediate_size, num_hidden_layers, \
                 max_position_embeddings)"
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

/// A model's tensors, read as the shapes the encoder wants (f32; a `bert.` prefix accepted).
struct Tensors<'a>(&'a SafeTensors<'a>);

impl Tensors<'_> {
    fn tensor(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, ModelError> {
        let st = self.0;
        let t = st
            .tensor(name)
            .or_else(|_| st.tensor(&format!("bert.{name}")))
            .map_err(|_| ModelError::Weights(format!("no tensor {name}")))?;
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
    /// output and norm, the feed-forward pair and its norm.
    fn layer(&self, p: &str, h: usize, intermediate: usize) -> Result<Layer, ModelError> {
        let (q, qb) = self.linear(&format!("{p}.attention.self.query"), h, h)?;
        let (k, kb) = self.linear(&format!("{p}.attention.self.key"), h, h)?;
        let (v, vb) = self.linear(&format!("{p}.attention.self.value"), h, h)?;
        let qkv =
            ndarray::concatenate(Axis(1), &[q.view(), k.view(), v.view()]).expect("same rows");
        let qkv_b = ndarray::concatenate(Axis(0), &[qb.view(), kb.view(), vb.view()]).expect("1-d");
        let (out, out_b) = self.linear(&format!("{p}.attention.output.dense"), h, h)?;
        let (up, up_b) = self.linear(&format!("{p}.intermediate.dense"), h, intermediate)?;
        let (down, down_b) = self.linear(&format!("{p}.output.dense"), intermediate, h)?;
        Ok(Layer {
            qkv,
            qkv_b,
            out,
            out_b,
            attn_norm: self.norm(&format!("{p}.attention.output.LayerNorm"), h)?,
            up,
            up_b,
            down,
            down_b,
            ffn_norm: self.norm(&format!("{p}.output.LayerNorm"), h)?,
        })
    }
}

impl BertEmbedder {
    /// Builds the encoder from a model folder's files: `config.json`, `model.safetensors` (f32)
    /// and `vocab.txt` (one WordPiece token per line, in id order). `name` is what reports
    /// call it. Uncased models (no ASCII upper-case letter in the vocabulary outside `[SPECIAL]` tokens)
    /// lower-case their input.
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
        let types = st
            .tensor("embeddings.token_type_embeddings.weight")
            .or_else(|_| st.tensor("bert.embeddings.token_type_embeddings.weight"))
            .ok()
            .and_then(|t| t.shape().first().copied())
            .filter(|n| *n > 0)
            .unwrap_or(2);
        let token_type =
            t.matrix("embeddings.token_type_embeddings.weight", types, h)?.row(0).to_owned();
        let emb_norm = t.norm("embeddings.LayerNorm", h)?;
        let layers = (0..cfg.num_hidden_layers)
            .map(|i| t.layer(&format!("encoder.layer.{i}"), h, cfg.intermediate_size))
            .collect::<Result<Vec<_>, _>>()?;
        let special = |t: &str| t.starts_with('[') && t.ends_with(']'); // [CLS], [unused0], …
        let lowercase =
            !tokens.iter().any(|t| !special(t) && t.bytes().any(|b| b.is_ascii_uppercase()));
        let tokenizer = WordPiece::new(tokens, lowercase);
        let id =
            |t: &str| tokenizer.id(t).ok_or_else(|| ModelError::Vocab(format!("no {t} token")));
        let (cls, sep) = (id("[CLS]")?, id("[SEP]")?);
        Ok(BertEmbedder {
            name: name.to_owned(),
            cfg,
            tokenizer,
            word,
            position,
            token_type,
            emb_norm,
            layers,
            cls,
            sep,
        })
    }

    /// The token ids the encoder sees for `text` (`[CLS] … [SEP]`, cut to the model's limit).
    pub fn token_ids(&self, text: &str) -> Vec<u32> {
        let limit = MAX_TOKENS.min(self.cfg.max_position_embeddings);
        let mut ids = vec![self.cls];
        ids.extend(self.tokenizer.token_ids(text).into_iter().take(limit - 2));
        ids.push(self.sep);
        ids
    }

    /// The pooled, unit-length embedding of one token sequence.
    fn encode(&self, ids: &[u32]) -> Vec<f32> {
        let (n, h) = (ids.len(), self.cfg.hidden_size);
        let heads = self.cfg.num_attention_heads;
        let hd = h / heads;
        let mut x = Array2::<f32>::zeros((n, h));
        for (i, &id) in ids.iter().enumerate() {
            let mut row = x.row_mut(i);
            row += &self.word.row(id as usize);
            row += &self.position.row(i);
            row += &self.token_type;
        }
        layer_norm(&mut x, &self.emb_norm, self.cfg.layer_norm_eps);
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
mod tests {
    use super::*;
    use safetensors::tensor::TensorView;

    const CONFIG: &str = r#"{"model_type": "bert", "hidden_size": 4, "num_hidden_layers": 1,
        "num_attention_heads": 2, "intermediate_size": 8, "max_position_embeddings": 8,
        "hidden_act": "gelu"}"#;
    const VOCAB: &str = "[PAD]\n[UNK]\n[CLS]\n[SEP]\nread\nfile\n##s\n";

    /// A one-layer model with deterministic weights in the safetensors format.
    fn weights(skip: Option<&str>) -> Vec<u8> {
        let mut shapes: Vec<(String, Vec<usize>)> = vec![
            ("embeddings.word_embeddings.weight".into(), vec![7, 4]),
            ("embeddings.position_embeddings.weight".into(), vec![8, 4]),
            ("embeddings.token_type_embeddings.weight".into(), vec![2, 4]),
            ("embeddings.LayerNorm.weight".into(), vec![4]),
            ("embeddings.LayerNorm.bias".into(), vec![4]),
        ];
        let p = "encoder.layer.0";
        for (name, out, inp) in [
            ("attention.self.query", 4, 4),
            ("attention.self.key", 4, 4),
            ("attention.self.value", 4, 4),
            ("attention.output.dense", 4, 4),
            ("intermediate.dense", 8, 4),
            ("output.dense", 4, 8),
        ] {
            shapes.push((format!("{p}.{name}.weight"), vec![out, inp]));
            shapes.push((format!("{p}.{name}.bias"), vec![out]));
        }
        for norm in ["attention.output.LayerNorm", "output.LayerNorm"] {
            shapes.push((format!("{p}.{norm}.weight"), vec![4]));
            shapes.push((format!("{p}.{norm}.bias"), vec![4]));
        }
        let data: Vec<(String, Vec<usize>, Vec<u8>)> = shapes
            .into_iter()
            .filter(|(n, _)| Some(n.as_str()) != skip)
            .enumerate()
            .map(|(i, (name, shape))| {
                let n: usize = shape.iter().product();
                let bytes = (0..n)
                    .flat_map(|j| (((i * 31 + j * 7) % 13) as f32 / 13.0 - 0.4).to_le_bytes())
                    .collect();
                (name, shape, bytes)
            })
            .collect();
        let views: Vec<(String, TensorView<'_>)> = data
            .iter()
            .map(|(n, s, b)| (n.clone(), TensorView::new(Dtype::F32, s.clone(), b).unwrap()))
            .collect();
        safetensors::serialize(views, None).unwrap()
    }

    #[test]
    fn a_small_model_embeds_to_unit_vectors() {
        let m = BertEmbedder::from_parts("tiny", CONFIG.as_bytes(), &weights(None), VOCAB).unwrap();
        assert_eq!(m.token_ids("Read FILES"), [2, 4, 5, 6, 3], "uncased: lower-cased first");
        let v = m.embed("read files");
        assert_eq!(v.len(), 4);
        assert!((v.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-5);
        assert_ne!(v, m.embed("file"));
        let texts: Vec<String> = vec!["read".into(), "files files files".into(), "file".into()];
        let batch = m.embed_batch(&texts);
        for (t, b) in texts.iter().zip(&batch) {
            assert_eq!(&m.embed(t), b, "a batch gives what one by one gives, in order");
        }
        // Longer than the position table: cut, not a panic.
        assert_eq!(m.token_ids(&"read ".repeat(20)).len(), 8);
        assert_eq!(m.embed(&"read ".repeat(20)).len(), 4);
    }

    #[test]
    fn what_it_cannot_run_is_refused_with_the_reason() {
        let w = weights(None);
        let err = |config: &str, w: &[u8], vocab: &str| {
            BertEmbedder::from_parts("t", config.as_bytes(), w, vocab).unwrap_err().to_string()
        };
        assert!(err("{", &w, VOCAB).starts_with("config.json"));
        let gpt = CONFIG.replace("\"bert\"", "\"gpt2\"");
        assert!(err(&gpt, &w, VOCAB).contains("only BERT"));
        let odd = CONFIG.replace("\"num_attention_heads\": 2", "\"num_attention_heads\": 3");
        assert!(err(&odd, &w, VOCAB).contains("multiple"));
        for (key, bad) in [
            ("\"hidden_size\": 4", "\"hidden_size\": 0"),
            ("\"max_position_embeddings\": 8", "\"max_position_embeddings\": 1"),
            ("\"num_hidden_layers\": 1", "\"num_hidden_layers\": 100000000000"),
        ] {
            assert!(err(&CONFIG.replace(key, bad), &w, VOCAB).contains("implausible"), "{bad}");
        }
        assert!(err(CONFIG, b"not safetensors", VOCAB).starts_with("model.safetensors"));
        let missing = weights(Some("encoder.layer.0.output.dense.bias"));
        assert!(
            err(CONFIG, &missing, VOCAB).contains("no tensor encoder.layer.0.output.dense.bias")
        );
        assert!(err(CONFIG, &w, "[PAD]\n[UNK]\n").starts_with("vocab.txt"));
        let no_cls = VOCAB.replace("[CLS]", "[CLT]");
        assert!(err(CONFIG, &w, &no_cls).contains("no [CLS] token"));
    }
}
