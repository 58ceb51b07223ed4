//! The router's tests.

use super::*;
use serde_json::json;

fn tool(name: &str, desc: &str, params: &[&str]) -> Value {
    let props: serde_json::Map<String, Value> =
        params.iter().map(|p| (p.to_string(), json!({"type": "string"}))).collect();
    json!({"name": name, "description": desc, "inputSchema": {"type": "object", "properties": props}})
}

fn catalog() -> Router {
    let mut r = Router::new();
    r.replace_server(
        "github",
        vec![
            (
                "github__create_issue".into(),
                tool(
                    "create_issue",
                    "Create a new issue in a repository",
                    &["owner", "repo", "title"],
                ),
            ),
            (
                "github__search_code".into(),
                tool("search_code", "Search code across repositories", &["q"]),
            ),
        ],
    );
    r.replace_server(
        "gitlab",
        vec![(
            "gitlab__create_issue".into(),
            tool("create_issue", "Create a new issue in a project", &["project_id", "title"]),
        )],
    );
    r.replace_server(
        "filesystem",
        vec![
            (
                "filesystem__read_file".into(),
                tool("read_file", "Read the complete contents of a file", &["path"]),
            ),
            (
                "filesystem__list_directory".into(),
                tool("list_directory", "List the entries of a directory", &["path"]),
            ),
        ],
    );
    r
}

#[test]
fn a_named_server_wins_and_reasons_are_given() {
    let r = catalog();
    let got = r.route("open an issue on gitlab", 2);
    assert_eq!(got.tools[0].name, "gitlab__create_issue");
    assert!(got.tools[0].matched.iter().any(|m| m == "server:gitlab"), "{:?}", got.tools[0]);
    let got = r.route("file an issue in github", 1);
    assert_eq!(got.tools[0].name, "github__create_issue");
    assert_eq!(got.catalog, 5);
    assert_eq!(got.tokens, got.tools[0].tokens);
    assert!(got.all_tokens > got.tokens && got.tokens > 10);
}

#[test]
fn ambiguous_queries_see_both_servers() {
    let r = catalog();
    let got = r.route("create issue", 2);
    let servers: HashSet<&str> = got.tools.iter().map(|t| t.server.as_str()).collect();
    assert_eq!(servers.len(), 2, "{:?}", got.tools);
}

#[test]
fn names_match_whole_words_only() {
    assert!(contains_word("run read_file on x", "read_file"));
    assert!(contains_word("read_file", "read_file"));
    assert!(!contains_word("a thread dump", "read"));
    assert!(!contains_word("remove it", "move"));
    assert!(contains_word("move: it", "move"));
    assert!(contains_word("é move", "move"));
}

#[test]
fn a_tool_named_in_the_query_comes_first() {
    let r = catalog();
    let got = r.route("run read_file on notes.txt", 3);
    assert_eq!(got.tools[0].name, "filesystem__read_file");
    assert!(got.tools[0].matched.contains(&"name".to_owned()));
}

#[test]
fn a_name_is_named_by_every_word_or_the_words_people_use_for_it() {
    let mut r = Router::new();
    let tools = [
        tool("get_pull_request", "Get details of a specific pull request", &["number"]),
        tool("create_pull_request", "Create a new pull request", &["title", "head"]),
        tool("listIssues", "List issues in a repository", &["state"]),
        tool("list_k8s_pods", "Pods of a cluster", &["namespace"]),
        tool("create_file", "Make a file", &["path"]),
    ];
    r.replace_server(
        "github",
        tools
            .iter()
            .map(|t| (format!("github__{}", t["name"].as_str().unwrap()), t.clone()))
            .collect(),
    );
    let named = |q: &str| -> Vec<String> {
        r.route(q, 3)
            .tools
            .into_iter()
            .filter(|t| t.matched.contains(&"name".to_owned()))
            .map(|t| t.name)
            .collect()
    };
    // "get" is a stop word: mentioning a pull request alone does not name get_pull_request.
    assert_eq!(named("open a pull request"), ["github__create_pull_request"]);
    assert_eq!(named("show me the details of pull request 7"), ["github__get_pull_request"]);
    assert_eq!(named("the pull request"), Vec::<String>::new());
    // camelCase names are named by their words too, and names with digits in a word.
    assert_eq!(named("show all open issues"), ["github__listIssues"]);
    assert_eq!(named("list k8s pods"), ["github__list_k8s_pods"]);
    // One word of the request does not stand for two of the name.
    assert_eq!(named("read the file notes.txt"), Vec::<String>::new());
    assert_eq!(named("file a new doc"), ["github__create_file"]);
}

#[test]
fn a_catalog_groups_by_server_in_first_seen_order() {
    let entry = |server: &str, name: &str| CatalogEntry {
        server: server.into(),
        tool: serde_json::from_value(tool(name, "", &[])).unwrap(),
    };
    let entries = vec![entry("b", "x"), entry("a", "y"), entry("b", "z")];
    let got: Vec<(String, Vec<String>)> = CatalogEntry::by_server(entries)
        .into_iter()
        .map(|(s, t)| (s, t.into_iter().map(|t| t.name).collect()))
        .collect();
    assert_eq!(got, [("b".into(), vec!["x".into(), "z".into()]), ("a".into(), vec!["y".into()])]);
}

#[test]
fn a_name_listed_twice_keeps_its_first_definition() {
    let mut r = Router::new();
    let old = tool("read_file", "Read a file", &["path"]);
    let new = tool("read_file", "Read a file's text", &["path"]);
    r.replace_server("fs", vec![("fs__read_file".into(), old.clone())]);
    // The first copy is a new version, the second the unchanged old one: the first counts.
    r.replace_server(
        "fs",
        vec![("fs__read_file".into(), new.clone()), ("fs__read_file".into(), old)],
    );
    assert_eq!(r.len(), 1);
    assert_eq!(r.tool("fs__read_file").map(|(_, t)| t), Some(&new));
    assert_eq!(r.all_tokens(), tokens::count(&new.to_string()));
}

#[test]
fn one_server_is_replaced_alone_and_tokens_follow() {
    let mut r = catalog();
    let before = r.all_tokens();
    r.replace_server(
        "filesystem",
        vec![("filesystem__read_file".into(), tool("read_file", "Read a file", &["path"]))],
    );
    assert_eq!(r.len(), 4);
    assert!(r.all_tokens() < before);
    assert!(
        r.route("list the entries of a directory", 5)
            .tools
            .iter()
            .all(|t| t.name != "filesystem__list_directory")
    );
    r.remove_server("github");
    r.remove_server("gitlab");
    r.remove_server("filesystem");
    assert_eq!((r.len(), r.all_tokens()), (0, 0));
    assert!(r.route("anything", 5).tools.is_empty());
}

/// Embeds by counting: each text gets a vector, and the calls are counted.
#[derive(Debug, Default)]
struct Counting(std::sync::atomic::AtomicUsize);

impl Embedder for Counting {
    fn dim(&self) -> usize {
        2
    }
    fn embed(&self, text: &str) -> Vec<f32> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let mut v = vec![text.len() as f32, 1.0];
        super::super::embed::normalize(&mut v);
        v
    }
    fn name(&self) -> &str {
        "counting"
    }
}

#[test]
fn a_list_change_reindexes_only_the_tools_that_changed() {
    let counting = Arc::new(Counting::default());
    let mut r = Router::new().with_embedder(counting.clone());
    let defs = |desc: &str| {
        vec![
            ("fs__read_file".to_owned(), tool("read_file", "Read a file", &["path"])),
            ("fs__move_file".to_owned(), tool("move_file", desc, &["from", "to"])),
            ("fs__stat".to_owned(), tool("stat", "File metadata", &["path"])),
        ]
    };
    r.replace_server("fs", defs("Move a file"));
    let calls = || counting.0.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(calls(), 3);
    let before = r.all_tokens();
    // The same list again (a server restart): nothing re-embedded.
    r.replace_server("fs", defs("Move a file"));
    assert_eq!((calls(), r.all_tokens()), (3, before));
    // One description changed, one tool dropped: one embedding, the rest kept.
    let mut changed = defs("Move or rename a file or a directory");
    changed.remove(2);
    r.replace_server("fs", changed);
    assert_eq!(calls(), 4);
    assert_eq!(r.len(), 2);
    assert!(r.tool("fs__stat").is_none());
    let got = r.route_with("rename a directory", 2, Ranker::Lexical);
    assert_eq!(got.tools[0].name, "fs__move_file");
    assert!(got.tools[0].matched.contains(&"renam".to_owned()), "{:?}", got.tools[0]);
    assert!(r.route_with("metadata", 2, Ranker::Lexical).tools.is_empty());
    // The freed slot is reused by the next tool, and its old vector is not.
    r.replace_server("other", vec![("other__x".into(), tool("x", "Something else", &[]))]);
    // (Min-max scaling leaves the least similar tool at 0: two of the three come back.)
    let semantic = r.route_with("something", 3, Ranker::Semantic);
    assert_eq!(semantic.tools.len(), 2);
    assert!(semantic.tools.iter().all(|t| r.tool(&t.name).is_some()));
    assert_eq!(r.route_with("something", 1, Ranker::Lexical).tools[0].name, "other__x");
}

/// `sync` compares each server's tools by their JSON text: the same lists again index
/// nothing, a default of `-0.0` where there was `0.0` is a change (which `==` on values
/// misses), and a server left out is dropped.
#[test]
fn sync_indexes_what_changed_by_its_text_and_drops_what_is_gone() {
    let counting = Arc::new(Counting::default());
    let mut r = Router::new().with_embedder(counting.clone());
    let calls = || counting.0.load(std::sync::atomic::Ordering::SeqCst);
    let lists = |zero: f64| {
        let mut scaled = tool("scale", "Scale a number", &["by"]);
        scaled["inputSchema"]["properties"]["by"]["default"] = json!(zero);
        vec![
            ("a".to_owned(), vec![("a__scale".to_owned(), scaled)]),
            ("b".to_owned(), vec![("b__read".to_owned(), tool("read", "Read a file", &["path"]))]),
        ]
    };
    r.sync(lists(0.0));
    assert_eq!((calls(), r.len()), (2, 2));
    r.sync(lists(0.0));
    assert_eq!(calls(), 2, "the same lists: nothing indexed again");
    assert!(r.holds("a", &lists(0.0)[0].1) && !r.holds("a", &lists(-0.0)[0].1));
    r.sync(lists(-0.0));
    assert_eq!(calls(), 3, "-0.0 is not 0.0: that one tool again, b left alone");
    let mut only_b = lists(-0.0);
    only_b.remove(0);
    r.sync(only_b);
    assert_eq!((calls(), r.len()), (3, 1));
    assert!(r.tool("a__scale").is_none() && r.tool("b__read").is_some());
}
