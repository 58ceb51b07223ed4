//! The encoder on small models of both families, and what it refuses.

use super::*;
use safetensors::tensor::TensorView;

const CONFIG: &str = r#"{"model_type": "bert", "hidden_size": 4, "num_hidden_layers": 1,
    "num_attention_heads": 2, "intermediate_size": 8, "max_position_embeddings": 8,
    "hidden_act": "gelu"}"#;
const VOCAB: &str = "[PAD]\n[UNK]\n[CLS]\n[SEP]\nread\nfile\n##s\n";

/// A one-layer model with deterministic weights in the safetensors format.
fn weights(skip: Option<&str>) -> Vec<u8> {
    family_weights(Family::Bert, skip)
}

/// [`weights`] in either family's layout (MPNet: 10 positions, a 4-bucket bias, other names).
fn family_weights(family: Family, skip: Option<&str>) -> Vec<u8> {
    let mut shapes: Vec<(String, Vec<usize>)> = vec![
        ("embeddings.word_embeddings.weight".into(), vec![7, 4]),
        ("embeddings.LayerNorm.weight".into(), vec![4]),
        ("embeddings.LayerNorm.bias".into(), vec![4]),
    ];
    let names = match family {
        Family::Bert => {
            shapes.push(("embeddings.position_embeddings.weight".into(), vec![8, 4]));
            shapes.push(("embeddings.token_type_embeddings.weight".into(), vec![2, 4]));
            ["attention.self.query", "attention.self.key", "attention.self.value"]
                .into_iter()
                .chain(["attention.output.dense", "attention.output.LayerNorm"])
        }
        Family::MpNet => {
            shapes.push(("embeddings.position_embeddings.weight".into(), vec![10, 4]));
            shapes.push(("encoder.relative_attention_bias.weight".into(), vec![4, 2]));
            ["attention.attn.q", "attention.attn.k", "attention.attn.v"]
                .into_iter()
                .chain(["attention.attn.o", "attention.LayerNorm"])
        }
    };
    let names: Vec<&str> = names.collect();
    let p = "encoder.layer.0";
    for (name, out, inp) in [
        (names[0], 4, 4),
        (names[1], 4, 4),
        (names[2], 4, 4),
        (names[3], 4, 4),
        ("intermediate.dense", 8, 4),
        ("output.dense", 4, 8),
    ] {
        shapes.push((format!("{p}.{name}.weight"), vec![out, inp]));
        shapes.push((format!("{p}.{name}.bias"), vec![out]));
    }
    for norm in [names[4], "output.LayerNorm"] {
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
    assert!(err(CONFIG, &missing, VOCAB).contains("no tensor encoder.layer.0.output.dense.bias"));
    assert!(err(CONFIG, &w, "[PAD]\n[UNK]\n").starts_with("vocab.txt"));
    let no_cls = VOCAB.replace("[CLS]", "[CLT]");
    assert!(err(CONFIG, &w, &no_cls).contains("no [CLS] token"));
}

const MPNET_CONFIG: &str = r#"{"model_type": "mpnet", "hidden_size": 4, "num_hidden_layers": 1,
    "num_attention_heads": 2, "intermediate_size": 8, "max_position_embeddings": 10,
    "hidden_act": "gelu", "pad_token_id": 1, "relative_attention_num_buckets": 4,
    "layer_norm_eps": 1e-5}"#;
const MPNET_VOCAB: &str = "<s>\n<pad>\n</s>\n[UNK]\nread\nfile\n##s\n";

#[test]
fn a_small_mpnet_model_embeds_with_its_own_markers_and_positions() {
    let w = family_weights(Family::MpNet, None);
    let m = BertEmbedder::from_parts("tiny", MPNET_CONFIG.as_bytes(), &w, MPNET_VOCAB).unwrap();
    assert_eq!(m.token_ids("Read FILES"), [0, 4, 5, 6, 2], "<s> … </s>, lower-cased");
    // Positions start after the padding id: 10 rows leave room for 8 tokens.
    assert_eq!(m.token_ids(&"read ".repeat(20)).len(), 8);
    assert_eq!(
        m.with_max_tokens(1000).token_ids(&"read ".repeat(20)).len(),
        8,
        "held to the table"
    );
    let m = BertEmbedder::from_parts("tiny", MPNET_CONFIG.as_bytes(), &w, MPNET_VOCAB).unwrap();
    let v = m.embed("read files");
    assert!((v.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-5);
    assert_ne!(v, m.embed("files read"), "the position bias and table tell the orders apart");
    assert_eq!(m.embed(&"read ".repeat(20)).len(), 4);
    // The bias table is required, and BERT's names are not MPNet's.
    let err = |w: &[u8]| {
        BertEmbedder::from_parts("t", MPNET_CONFIG.as_bytes(), w, MPNET_VOCAB)
            .unwrap_err()
            .to_string()
    };
    let no_bias = family_weights(Family::MpNet, Some("encoder.relative_attention_bias.weight"));
    assert!(err(&no_bias).contains("no tensor encoder.relative_attention_bias.weight"));
    assert!(
        err(&weights(None)).starts_with("model.safetensors"),
        "BERT weights under an MPNet config"
    );
    let no_s = MPNET_VOCAB.replace("<s>", "<t>");
    let e = BertEmbedder::from_parts("t", MPNET_CONFIG.as_bytes(), &w, &no_s).unwrap_err();
    assert!(e.to_string().contains("no <s> token"), "{e}");
    let pad = MPNET_CONFIG.replace("\"pad_token_id\": 1", "\"pad_token_id\": 18446744073709551615");
    let e = BertEmbedder::from_parts("t", pad.as_bytes(), &w, MPNET_VOCAB).unwrap_err();
    assert!(e.to_string().contains("implausible"), "{e}");
}

/// MPNet's buckets, as scripts/mpnet.py (Hugging Face's computation, in float32) gives them for
/// a key `d` tokens after the query and `d` tokens before it.
#[test]
fn relative_buckets_are_the_references() {
    let after = [0, 17, 18, 19, 20, 21, 22, 23, 24, 24, 24, 24, 25, 25, 25, 25, 26, 26, 26, 26];
    let before = [0, 1, 2, 3, 4, 5, 6, 7, 8, 8, 8, 8, 9, 9, 9, 9, 10, 10, 10, 10];
    for d in 0..20 {
        assert_eq!(relative_bucket(0, d, 32), after[d], "{d} after");
        assert_eq!(relative_bucket(d + 5, 5, 32), before[d], "{d} before");
    }
    for (d, want) in
        [(16, 10), (31, 11), (32, 12), (63, 13), (64, 14), (127, 15), (128, 15), (299, 15)]
    {
        assert_eq!(relative_bucket(d, 0, 32), want, "{d} before");
        assert_eq!(relative_bucket(0, d, 32), want + 16, "{d} after");
    }
}
