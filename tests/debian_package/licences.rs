//! The licences of the crates linked in, for tests/debian_package.rs:
//! SPDX expressions, DEP-5 fields, cargo tree's release graph and the
//! package's crate-licenses.gz.

use super::*;
use std::collections::{BTreeMap, BTreeSet};
use std::process::{Command, Stdio};

/// What identifies the text of each licence that the crates name (SPDX
/// identifiers, as Cargo.toml's `license` uses them): a sentence of it.
pub fn licence_marker(id: &str) -> Option<&'static str> {
    Some(match id {
        "Apache-2.0" => "Apache License",
        "MIT" => "Permission is hereby granted, free of charge",
        "ISC" => "Permission to use, copy, modify, and/or distribute this software",
        "BSD-2-Clause" | "BSD-3-Clause" => "Redistribution and use in source and binary forms",
        "BSL-1.0" => "Boost Software License",
        "Zlib" => "This software is provided 'as-is'",
        "Unlicense" => "This is free and unencumbered software",
        "Unicode-3.0" => "UNICODE LICENSE V3",
        "LGPL-2.1-or-later" => "GNU Lesser General Public License",
        "LLVM-exception" => "LLVM Exceptions to the Apache 2.0 License",
        _ => return None,
    })
}

/// Whether the licence texts `texts` satisfy the SPDX expression `expr`
/// (SPDX 2.3 annex D: "WITH" binds tightest, then "AND", then "OR";
/// Cargo's old "A/B" is "A OR B"): every licence of an AND, one of an
/// OR, a licence and its exception for a WITH. Err names an identifier
/// without a known text.
pub fn texts_satisfy(expr: &str, texts: &str) -> Result<bool, String> {
    fn has(id: &str, texts: &str) -> Result<bool, String> {
        let marker = licence_marker(id).ok_or_else(|| format!("unknown licence {id:?}"))?;
        Ok(texts
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
            .contains(&marker.to_lowercase()))
    }
    fn or(tokens: &[String], pos: &mut usize, texts: &str) -> Result<bool, String> {
        let mut any = and(tokens, pos, texts)?;
        while tokens.get(*pos).is_some_and(|t| t == "OR") {
            *pos += 1;
            any |= and(tokens, pos, texts)?;
        }
        Ok(any)
    }
    fn and(tokens: &[String], pos: &mut usize, texts: &str) -> Result<bool, String> {
        let mut all = with(tokens, pos, texts)?;
        while tokens.get(*pos).is_some_and(|t| t == "AND") {
            *pos += 1;
            all &= with(tokens, pos, texts)?;
        }
        Ok(all)
    }
    fn with(tokens: &[String], pos: &mut usize, texts: &str) -> Result<bool, String> {
        let token = tokens.get(*pos).ok_or("expression ends early")?.clone();
        *pos += 1;
        let base = if token == "(" {
            let inner = or(tokens, pos, texts)?;
            if tokens.get(*pos).map(String::as_str) != Some(")") {
                return Err("unbalanced parenthesis".into());
            }
            *pos += 1;
            inner
        } else {
            has(&token, texts)?
        };
        if tokens.get(*pos).is_some_and(|t| t == "WITH") {
            let exception = tokens.get(*pos + 1).ok_or("WITH without exception")?;
            *pos += 2;
            return Ok(base && has(exception, texts)?);
        }
        Ok(base)
    }
    let tokens: Vec<String> = expr
        .replace('/', " OR ")
        .replace('(', " ( ")
        .replace(')', " ) ")
        .split_whitespace()
        .map(String::from)
        .collect();
    let mut pos = 0;
    let ok = or(&tokens, &mut pos, texts)?;
    if pos != tokens.len() {
        return Err(format!("cannot read {expr:?}"));
    }
    Ok(ok)
}

/// The licence identifiers of an SPDX expression, as copyright-format 1.0
/// names them in debian/copyright ("-or-later" is "+"; an exception
/// "Apache-2.0 with LLVM exception").
pub fn dep5_licences(expr: &str) -> BTreeSet<String> {
    let tokens: Vec<String> = expr
        .replace(['/', '(', ')'], " ")
        .split_whitespace()
        .map(String::from)
        .collect();
    let mut names = BTreeSet::new();
    let mut i = 0;
    while i < tokens.len() {
        let t = &tokens[i];
        if t == "OR" || t == "AND" {
            i += 1;
            continue;
        }
        let mut name = match t.strip_suffix("-or-later") {
            Some(base) => format!("{}+", base.strip_suffix(".0").unwrap_or(base)),
            None => t.clone(),
        };
        if tokens.get(i + 1).is_some_and(|w| w == "WITH") {
            let exception = tokens[i + 2].trim_end_matches("-exception");
            name = format!("{name} with {exception} exception");
            i += 2;
        }
        names.insert(name);
        i += 1;
    }
    names
}

/// The crates linked into the binary, as `cargo tree` (not `cargo
/// metadata`, which debian/crate-licenses.sh reads) sees the release
/// build: the normal and build dependencies for the host, with their
/// licence expression. Without the root package.
pub fn linked_crates() -> ByCrate {
    let out = Command::new(env!("CARGO"))
        .args([
            "tree",
            "--locked",
            "--offline",
            "--edges",
            "normal,build",
            "--prefix",
            "none",
            "--format",
            "{p}|{l}",
        ])
        .current_dir(repo_root())
        .stdin(Stdio::null())
        .output()
        .expect("running cargo tree");
    assert!(out.status.success(), "{}", show("cargo tree", &out));
    let mut crates = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Some((package, licence)) = line.split_once('|') else {
            continue;
        };
        let mut words = package.split_whitespace();
        let (Some(name), Some(version)) = (words.next(), words.next()) else {
            continue;
        };
        if name == PKG {
            continue;
        }
        let version = version.trim_start_matches('v').to_string();
        // A crate seen before ends with "(*)".
        let licence = licence.trim().trim_end_matches("(*)").trim();
        crates.insert((name.to_string(), version), licence.to_string());
    }
    assert!(crates.len() > 50, "cargo tree found only {crates:?}");
    crates
}

/// Something for each crate, by name and version.
pub type ByCrate = BTreeMap<(String, String), String>;

/// Sections of crate-licenses: for each "Crate: NAME VERSION" of a licence
/// file's header, the texts of its files; and the licence of each crate of
/// the list at the top.
pub fn read_crate_licenses(text: &str) -> (ByCrate, ByCrate) {
    let mut listed = BTreeMap::new();
    let mut texts: BTreeMap<(String, String), String> = BTreeMap::new();
    let rule = format!("{}\n", "-".repeat(79));
    let mut parts = text.split(rule.as_str());
    let head = parts.next().unwrap_or("");
    let key = |line: &str| {
        let mut w = line.split_whitespace();
        (
            w.next().unwrap_or("").to_string(),
            w.next().unwrap_or("").to_string(),
        )
    };
    let mut lines = head.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(krate) = line.strip_prefix("Crate: ") {
            let licence = lines
                .next()
                .and_then(|l| l.strip_prefix("License: "))
                .unwrap_or("");
            listed.insert(key(krate), licence.to_string());
        }
    }
    for part in parts {
        let Some(krate) = part.lines().next().and_then(|l| l.strip_prefix("Crate: ")) else {
            continue;
        };
        texts.entry(key(krate)).or_default().push_str(part);
    }
    (listed, texts)
}

/// What is wrong with crate-licenses and debian/copyright for `crates`
/// (cargo tree's): every crate listed with its licence, the text of its
/// licence (one of each choice, all of each conjunction) shipped from its
/// own licence files, and a Files paragraph vendor/NAME-VERSION/* in
/// debian/copyright whose licences each have a stand-alone License
/// paragraph (copyright-format 1.0, which lintian checks too:
/// missing-license-paragraph-in-dep5-copyright).
pub fn licence_problems(crates: &ByCrate, crate_licenses: &str, copyright: &str) -> Vec<String> {
    let (listed, texts) = read_crate_licenses(crate_licenses);
    let paragraphs: Vec<BTreeMap<String, String>> = copyright
        .split("\n\n")
        .map(|p| {
            let mut fields = BTreeMap::new();
            for line in p.lines() {
                if line.starts_with([' ', '\t']) {
                    continue;
                }
                if let Some((k, v)) = line.split_once(':') {
                    fields.insert(k.to_string(), v.trim().to_string());
                }
            }
            fields
        })
        .collect();
    let standalone: BTreeSet<&str> = paragraphs
        .iter()
        .filter(|p| !p.contains_key("Files") && !p.contains_key("Format"))
        .filter_map(|p| p.get("License").map(String::as_str))
        .collect();
    let mut problems = Vec::new();
    for ((name, version), licence) in crates {
        let id = format!("{name} {version}");
        match listed.get(&(name.clone(), version.clone())) {
            None => problems.push(format!("{id}: not in crate-licenses")),
            Some(l) if l != licence => problems.push(format!(
                "{id}: crate-licenses says {l:?}, cargo {licence:?}"
            )),
            Some(_) => {}
        }
        let shipped = texts
            .get(&(name.clone(), version.clone()))
            .map(String::as_str)
            .unwrap_or("");
        match texts_satisfy(licence, shipped) {
            Ok(true) => {}
            Ok(false) => problems.push(format!("{id}: the text of {licence:?} is not shipped")),
            Err(e) => problems.push(format!("{id}: {e}")),
        }
        let files = format!("vendor/{name}-{version}/*");
        match paragraphs
            .iter()
            .find(|p| p.get("Files").is_some_and(|f| f == &files))
        {
            None => problems.push(format!("{id}: no \"Files: {files}\" in debian/copyright")),
            Some(p) => {
                let field = p.get("License").cloned().unwrap_or_default();
                for name in dep5_licences(licence) {
                    if !field.contains(&name) {
                        problems.push(format!("{id}: License: {field:?} lacks {name:?}"));
                    }
                    if !standalone.contains(name.as_str()) {
                        problems.push(format!(
                            "{id}: no License paragraph for {name:?} in debian/copyright"
                        ));
                    }
                }
            }
        }
    }
    problems
}
