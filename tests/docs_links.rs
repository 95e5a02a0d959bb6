//! Issue 23: the manual's pages link to each other and to the repository's
//! files; every such link leads somewhere. README.md is the front page (a
//! few hundred lines at most) and names every page of `docs/`; each
//! relative link of README.md, `docs/*.md` and the other guides resolves to
//! a file of the repository, and each `#anchor` to a heading of its target,
//! by GitHub's rule for a heading's anchor (lower case; letters, digits,
//! spaces, `-` and `_` kept; spaces to `-`; a repeated heading gets `-1`,
//! `-2`…). A deliberately broken page must fail the same check.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The Markdown files the manual is made of.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    for other in [
        "opennms/README.md",
        "mibs/README.md",
        "fuzz/README.md",
        "prometheus/README.md",
        "icinga/README.md",
        "snmptt/README.md",
    ] {
        let path = root().join(other);
        if path.exists() {
            pages.push(path);
        }
    }
    pages
}

/// GitHub's anchor of a heading's text.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The lines of a Markdown text outside its fenced code blocks.
fn prose(text: &str) -> impl Iterator<Item = &str> {
    let mut fenced = false;
    text.lines().filter(move |line| {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            return false;
        }
        !fenced
    })
}

/// The anchors of a Markdown text's headings (outside code blocks).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for line in prose(text) {
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        let heading = heading.trim_start_matches('#');
        if !heading.starts_with(' ') {
            continue;
        }
        let base = anchor(heading);
        let mut name = base.clone();
        let mut n = 0;
        while seen.contains(&name) {
            n += 1;
            name = format!("{base}-{n}");
        }
        seen.insert(name);
    }
    seen
}

/// The targets of a text's inline links `[text](target)`, outside code.
fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in prose(text) {
        // Inline code is not a link.
        let mut plain = String::new();
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 0 {
                plain.push_str(part);
            }
        }
        let mut rest = plain.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            found.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    found
}

/// What is wrong with the links of `page` (its text `text`).
fn broken_links(page: &Path, text: &str) -> Vec<String> {
    let mut broken = Vec::new();
    for target in links(text) {
        if target.starts_with("http://") || target.starts_with("https://") {
            continue;
        }
        let (file, fragment) = match target.split_once('#') {
            Some((file, fragment)) => (file, Some(fragment)),
            None => (target.as_str(), None),
        };
        let resolved = if file.is_empty() {
            page.to_path_buf()
        } else {
            page.parent().unwrap().join(file)
        };
        if !resolved.exists() {
            broken.push(format!("{}: {target}: no such file", page.display()));
            continue;
        }
        if let Some(fragment) = fragment {
            let target_text = std::fs::read_to_string(&resolved).unwrap_or_default();
            if !anchors(&target_text).contains(fragment) {
                broken.push(format!(
                    "{}: {target}: no heading with that anchor",
                    page.display()
                ));
            }
        }
    }
    broken
}

#[test]
fn every_link_of_the_manual_leads_somewhere() {
    let mut broken = Vec::new();
    let mut count = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        count += links(&text).len();
        broken.extend(broken_links(&page, &text));
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
    assert!(count > 20, "only {count} links read");

    // A broken copy of a page: a missing file and a missing anchor.
    let page = root().join("docs/notifications.md");
    let text = std::fs::read_to_string(&page).unwrap()
        + "\nSee [gone](no-such-page.md) and [nowhere](puppet.md#no-such-heading).\n";
    let found = broken_links(&page, &text);
    assert_eq!(found.len(), 2, "{found:?}");
}

#[test]
fn the_front_page_is_short_and_names_every_page() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines: the rest belongs in docs/"
    );
    for page in pages() {
        if page.parent() != Some(&root().join("docs")) {
            continue;
        }
        let name = format!("docs/{}", page.file_name().unwrap().to_string_lossy());
        assert!(
            links(&readme)
                .iter()
                .any(|l| l.split('#').next() == Some(&name)),
            "README.md does not link {name}"
        );
    }
}

#[test]
fn anchors_follow_githubs_rule() {
    assert_eq!(
        anchor(" Reacting across the network: `redis-snmp kick`"),
        "reacting-across-the-network-redis-snmp-kick"
    );
    assert_eq!(
        anchor(" When nothing shows: `redis-snmp doctor`"),
        "when-nothing-shows-redis-snmp-doctor"
    );
    let twice = anchors("# A\n## Same\n```\n# not a heading\n```\n## Same\n");
    assert!(twice.contains("same") && twice.contains("same-1") && !twice.contains("not-a-heading"));
}
