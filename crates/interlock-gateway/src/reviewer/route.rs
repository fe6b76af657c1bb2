//! Where an item's review is in the review UI this gateway serves (its hash
//! routes, `#/plans/<id>`, `#/servers/<name>`, `#/standing/<id>`): what the
//! desktop's notifications open and what `interlock serve` prints for a hold.

use interlock_trust::SubjectKind;

/// The route of an item's review in the UI.
pub fn route(kind: SubjectKind, subject: &str) -> String {
    let section = match kind {
        SubjectKind::Plan => "plans",
        SubjectKind::Server => "servers",
        SubjectKind::Standing => "standing",
    };
    format!("#/{section}/{}", encode_component(subject))
}

/// `encodeURIComponent`.
pub fn encode_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_encode_the_subject_as_the_ui_decodes_it() {
        assert_eq!(
            route(SubjectKind::Plan, "gw notes/1"),
            "#/plans/gw%20notes%2F1"
        );
        assert_eq!(route(SubjectKind::Server, "files"), "#/servers/files");
        assert_eq!(route(SubjectKind::Standing, "g-1"), "#/standing/g-1");
        assert_eq!(encode_component("é~*"), "%C3%A9~*");
    }
}
