//! Which arguments are paths and which are commands (by the policy's lists, by their name, by
//! their schema), and the metacharacter check of command-like and SQL arguments.

use serde_json::Value;

/// Argument names recognised as paths wherever they appear.
const PATH_NAMES: [&str; 18] = [
    "path",
    "paths",
    "file",
    "files",
    "filename",
    "filepath",
    "file_path",
    "dir",
    "dirs",
    "directory",
    "directories",
    "folder",
    "source",
    "destination",
    "src",
    "dst",
    "cwd",
    "root",
];
/// Name endings recognised as paths (`source_path`, `outputFile`, `workDir`, ...).
const PATH_SUFFIXES: [&str; 8] =
    ["_path", "Path", "_file", "File", "_dir", "Dir", "_directory", "Directory"];
/// Argument names recognised as shell-like commands.
const COMMAND_NAMES: [&str; 5] = ["command", "cmd", "shell", "script", "commands"];
/// `format`s that make a schema property a path.
const PATH_FORMATS: [&str; 5] = ["uri", "uri-reference", "iri", "path", "file-path"];

/// The metacharacters refused in command-like arguments (each with how it is named).
const METACHARS: [(&str, &str); 10] = [
    (";", "';'"),
    ("&", "'&'"),
    ("|", "'|'"),
    ("`", "a backtick"),
    ("$(", "'$('"),
    ("${", "'${'"),
    (">", "'>'"),
    ("<", "'<'"),
    ("\n", "a newline"),
    ("\r", "a carriage return"),
];

/// What the policy looks for in a tool's arguments.
#[derive(Debug, Clone, Default)]
pub(crate) struct ArgKinds {
    pub(crate) path_args: Vec<String>,
    pub(crate) command_args: Vec<String>,
    pub(crate) sql_args: Vec<String>,
}

/// One string argument of a kind to check, with where it is (a JSON pointer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found<'a> {
    pub(crate) pointer: String,
    pub(crate) value: &'a str,
}

/// What kind an argument named `name` is, given the schema's hints for it.
fn kind_of(kinds: &ArgKinds, name: &str, schema_path: bool) -> (bool, bool, bool) {
    let path = schema_path
        || kinds.path_args.iter().any(|n| n == name)
        || PATH_NAMES.contains(&name)
        || PATH_SUFFIXES.iter().any(|s| name.ends_with(s) && name.len() > s.len());
    let command = kinds.command_args.iter().any(|n| n == name)
        || COMMAND_NAMES.contains(&name)
        || name.ends_with("_command")
        || name.ends_with("Command");
    let sql = kinds.sql_args.iter().any(|n| n == name);
    (path, command, sql)
}

/// Whether the input schema marks property `name` as a path (its `format`).
fn schema_says_path(schema: Option<&Value>, name: &str) -> bool {
    let prop = schema.and_then(|s| s.get("properties")).and_then(|p| p.get(name));
    let format = |v: Option<&Value>| {
        v.and_then(|v| v.get("format"))
            .and_then(Value::as_str)
            .is_some_and(|f| PATH_FORMATS.contains(&f))
    };
    format(prop) || format(prop.and_then(|p| p.get("items")))
}

/// The string arguments (at any depth) that are paths, commands and SQL; also any string
/// anywhere that is a `file://` URI (a path).
pub(crate) fn classify<'a>(
    kinds: &ArgKinds,
    schema: Option<&Value>,
    arguments: &'a Value,
) -> (Vec<Found<'a>>, Vec<Found<'a>>, Vec<Found<'a>>) {
    let (mut paths, mut commands, mut sql) = (Vec::new(), Vec::new(), Vec::new());
    walk(kinds, schema, arguments, String::new(), (false, false, false), &mut |f, k| match k {
        0 => paths.push(f),
        1 => commands.push(f),
        _ => sql.push(f),
    });
    (paths, commands, sql)
}

fn walk<'a>(
    kinds: &ArgKinds,
    schema: Option<&Value>,
    value: &'a Value,
    pointer: String,
    inherited: (bool, bool, bool),
    out: &mut impl FnMut(Found<'a>, u8),
) {
    match value {
        Value::String(s) => {
            let (path, command, sql) = inherited;
            if path || is_file_uri(s) {
                out(Found { pointer: pointer.clone(), value: s }, 0);
            }
            if command {
                out(Found { pointer: pointer.clone(), value: s }, 1);
            }
            if sql {
                out(Found { pointer, value: s }, 2);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk(kinds, None, item, format!("{pointer}/{i}"), inherited, out);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                let (p, c, q) = kind_of(kinds, key, schema_says_path(schema, key));
                let kind = (inherited.0 || p, inherited.1 || c, inherited.2 || q);
                let escaped = key.replace('~', "~0").replace('/', "~1");
                let sub = schema.and_then(|s| s.get("properties")).and_then(|p| p.get(key));
                walk(kinds, sub, item, format!("{pointer}/{escaped}"), kind, out);
            }
        }
        _ => {}
    }
}

/// Whether `s` is a `file:` URI with an authority (the scheme in any case, as URL parsers
/// read it).
fn is_file_uri(s: &str) -> bool {
    s.get(..7).is_some_and(|scheme| scheme.eq_ignore_ascii_case("file://"))
}

/// The first metacharacter of `value` not in `allowed`, named: in the text as it is, and in
/// its Unicode compatibility form (NFKC makes `；` of a fullwidth semicolon, for a server that
/// normalises). A tab is a word separator, like a space, and passes.
pub(crate) fn metachar(value: &str, allowed: &str) -> Option<&'static str> {
    use unicode_normalization::UnicodeNormalization;
    let found = |text: &str| {
        let listed = METACHARS
            .iter()
            .find(|(m, _)| text.contains(m) && !m.chars().all(|c| allowed.contains(c)))
            .map(|(_, name)| *name);
        listed.or_else(|| (!allowed.contains('$') && expands_variable(text)).then_some(VARIABLE))
    };
    found(value).or_else(|| {
        // NFKC leaves ASCII as it is: only other text can hide a metacharacter.
        if value.is_ascii() {
            return None;
        }
        let nfkc: String = value.nfkc().collect();
        if nfkc == value { None } else { found(&nfkc) }
    })
}

/// How a shell variable's expansion is named.
const VARIABLE: &str = "a '$' variable";

/// Whether `text` holds `$NAME`, `$1` or a special parameter (`$?`, `$$`, ...): what a shell
/// expands (`$(` and `${` are listed on their own).
fn expands_variable(text: &str) -> bool {
    text.as_bytes()
        .windows(2)
        .any(|w| w[0] == b'$' && (w[1].is_ascii_alphanumeric() || b"_?!#*@-$".contains(&w[1])))
}

/// Why an SQL argument is refused: a statement separator or a comment.
pub(crate) fn sql_problem(value: &str) -> Option<&'static str> {
    if value.trim_end().trim_end_matches(';').contains(';') {
        Some("a statement separator ';'")
    } else if value.contains("--") {
        Some("a '--' comment")
    } else if value.contains("/*") {
        Some("a '/*' comment")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_and_commands_are_found_by_name_list_and_schema() {
        let kinds = ArgKinds {
            path_args: vec!["target".into()],
            command_args: vec!["run".into()],
            sql_args: vec!["query".into()],
        };
        let schema = json!({"properties": {"where": {"type": "string", "format": "uri"}}});
        let args = json!({
            "path": "/a", "paths": ["/b", "/c"], "target": "/d", "where": "/e",
            "edits": [{"filePath": "/f"}], "note": "file:///g", "plain": "/not-a-path",
            "command": "ls", "run": "x", "query": "select 1", "opts": {"shell": "sh"}
        });
        let (paths, commands, sql) = classify(&kinds, Some(&schema), &args);
        let mut p: Vec<&str> = paths.iter().map(|f| f.value).collect();
        p.sort_unstable();
        assert_eq!(p, ["/a", "/b", "/c", "/d", "/e", "/f", "file:///g"]);
        // The scheme in any case is a path (a URL parser reads FILE:// as file://).
        let upper =
            json!({"note": "FILE:///etc/passwd", "other": "File://host/x", "no": "files://x"});
        let (paths, _, _) = classify(&ArgKinds::default(), None, &upper);
        let mut p: Vec<&str> = paths.iter().map(|f| f.value).collect();
        p.sort_unstable();
        assert_eq!(p, ["FILE:///etc/passwd", "File://host/x"]);
        let c: Vec<(&str, &str)> = commands.iter().map(|f| (f.pointer.as_str(), f.value)).collect();
        assert_eq!(c, [("/command", "ls"), ("/opts/shell", "sh"), ("/run", "x")]);
        assert_eq!(sql[0].value, "select 1");
    }

    #[test]
    fn metacharacters_and_sql() {
        for bad in [
            "ls; rm -rf ~",
            "a && b",
            "a | b",
            "`id`",
            "$(id)",
            "${HOME}",
            "a > f",
            "a < f",
            "a\nb",
        ] {
            assert!(metachar(bad, "").is_some(), "{bad:?}");
        }
        assert_eq!(metachar("ls -la /tmp", ""), None);
        // A variable a shell expands, without braces; a fullwidth metacharacter a server's
        // NFKC turns into the real one; a tab is a separator like a space.
        for bad in
            ["echo $HOME", "cat $1", "echo $?", "kill $$", "ls；rm -rf ~", "a ｜ b", "ｅcho ＄HOME"]
        {
            assert!(metachar(bad, "").is_some(), "{bad:?}");
        }
        assert_eq!(metachar("echo $HOME", ""), Some(VARIABLE));
        assert_eq!(metachar("ls；rm", ""), Some("';'"));
        assert_eq!(metachar("echo $HOME", "$"), None, "allowed as asked");
        assert_eq!(metachar("ls\t-la\t/tmp", ""), None);
        assert_eq!(metachar("costs 5 $ or 4 €", ""), None, "a lone dollar sign expands nothing");
        assert_eq!(metachar("a | b", "|"), None);
        assert_eq!(metachar("$(id)", "$"), Some("'$('"), "both characters must be allowed");
        assert_eq!(sql_problem("select * from t where a = 1;"), None);
        assert!(sql_problem("select 1; drop table t").is_some());
        assert!(sql_problem("select 1 -- x").is_some());
    }
}
