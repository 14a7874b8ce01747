//! A tolerant scan of the raw URDF text for facts that `urdf-rs` does not preserve.
//!
//! `urdf-rs` fills absent elements with defaults: a link without `<inertial>` gets mass 0, a
//! joint without `<limit>` gets all-zero limits. To tell "absent" from "explicitly zero" we
//! record which links have an `<inertial>` child and which joints have a `<limit>` child.
//! The scan never fails; the text has already been parsed successfully by `urdf-rs`.

use std::collections::HashSet;

/// Which optional child elements are present, by link/joint name.
#[derive(Debug, Default)]
pub(crate) struct Presence {
    pub links_with_inertial: HashSet<String>,
    pub joints_with_limit: HashSet<String>,
}

/// One open element on the stack: tag name and its `name` attribute.
struct Open {
    tag: String,
    name: Option<String>,
}

pub(crate) fn scan(text: &str) -> Presence {
    let mut presence = Presence::default();
    let mut stack: Vec<Open> = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find('<') {
        rest = &rest[start..];
        if let Some(after) = skip_special(rest) {
            rest = after;
            continue;
        }
        let Some(end) = tag_end(rest) else { break };
        let tag_text = &rest[1..end];
        rest = &rest[end + 1..];
        if let Some(closing) = tag_text.strip_prefix('/') {
            let tag = closing.trim();
            if let Some(pos) = stack.iter().rposition(|o| o.tag == tag) {
                stack.truncate(pos);
            }
            continue;
        }
        let self_closing = tag_text.trim_end().ends_with('/');
        let body = tag_text.trim_end().trim_end_matches('/');
        let tag = body
            .split(|c: char| c.is_whitespace())
            .next()
            .unwrap_or_default()
            .to_string();
        let open = Open {
            name: attribute(body, "name"),
            tag,
        };
        record(&mut presence, &stack, &open);
        if !self_closing {
            stack.push(open);
        }
    }
    presence
}

fn record(presence: &mut Presence, stack: &[Open], open: &Open) {
    // Only direct children of top-level <link>/<joint> elements (robot > link > inertial).
    if stack.len() != 2 {
        return;
    }
    let Some(parent) = stack.last() else { return };
    let Some(name) = parent.name.clone() else {
        return;
    };
    match (parent.tag.as_str(), open.tag.as_str()) {
        ("link", "inertial") => {
            presence.links_with_inertial.insert(name);
        }
        ("joint", "limit") => {
            presence.joints_with_limit.insert(name);
        }
        _ => {}
    }
}

/// Skips comments, CDATA, processing instructions and declarations; returns the rest.
fn skip_special(s: &str) -> Option<&str> {
    for (open, close) in [
        ("<!--", "-->"),
        ("<![CDATA[", "]]>"),
        ("<?", "?>"),
        ("<!", ">"),
    ] {
        if let Some(body) = s.strip_prefix(open) {
            return Some(match body.find(close) {
                Some(i) => &body[i + close.len()..],
                None => "",
            });
        }
    }
    None
}

/// Index of the `>` that ends the tag starting at `s[0] == '<'`, skipping quoted values.
fn tag_end(s: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '>') => return Some(i),
            _ => {}
        }
    }
    None
}

/// Value of attribute `key` in a tag body such as `link name="a" type='b'`.
fn attribute(body: &str, key: &str) -> Option<String> {
    let mut rest = body;
    while let Some(pos) = rest.find(key) {
        let before_ok = rest[..pos]
            .chars()
            .next_back()
            .is_some_and(char::is_whitespace);
        let after = rest[pos + key.len()..].trim_start();
        if before_ok {
            if let Some(value) = after.strip_prefix('=') {
                let value = value.trim_start();
                let quote = value.chars().next()?;
                if quote == '"' || quote == '\'' {
                    let inner = &value[1..];
                    let end = inner.find(quote)?;
                    return Some(inner[..end].to_string());
                }
            }
        }
        rest = &rest[pos + key.len()..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_inertials_and_limits_but_not_in_comments() {
        let text = r#"<?xml version="1.0"?>
<!-- <link name="c"><inertial/></link> -->
<robot name="r" xmlns:xacro="http://ros.org/wiki/xacro">
  <link name='a'><inertial><mass value="1"/></inertial></link>
  <link name="b"/>
  <link name="c"><visual><geometry><box size="1 1 1"/></geometry></visual></link>
  <joint name="j" type="revolute"><parent link="a"/><child link="b"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="k" type="continuous"><parent link="a"/><child link="c"/></joint>
</robot>"#;
        let p = scan(text);
        assert!(p.links_with_inertial.contains("a"));
        assert!(!p.links_with_inertial.contains("b"));
        assert!(!p.links_with_inertial.contains("c"));
        assert!(p.joints_with_limit.contains("j"));
        assert!(!p.joints_with_limit.contains("k"));
    }

    #[test]
    fn attribute_parsing() {
        assert_eq!(attribute(r#"link name="x""#, "name").as_deref(), Some("x"));
        assert_eq!(
            attribute(r#"link  name = 'y' "#, "name").as_deref(),
            Some("y")
        );
        assert_eq!(attribute(r#"link xname="x""#, "name"), None);
    }
}
