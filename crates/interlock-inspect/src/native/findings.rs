//! The findings of one native action, and the rules about a file written or
//! read that the shell rules share with the file tools'.

use super::context::NativeContext;
use super::paths;
use crate::{Category, Finding, Severity};

/// The findings of one action, deduplicated by rule.
pub(crate) struct Findings {
    pub(crate) path: &'static str,
    pub(crate) found: Vec<Finding>,
}

impl Findings {
    pub(crate) fn add(&mut self, category: Category, rule: &'static str, severity: Severity) {
        if self.found.iter().any(|f| f.rule == rule) {
            return;
        }
        self.found.push(Finding {
            category,
            path: self.path.to_owned(),
            rule,
            severity,
            span: None,
        });
    }
}

/// What writing the file at `abs` means.
pub(crate) fn write_rules(abs: &str, ctx: &NativeContext<'_>, out: &mut Findings) {
    if paths::scratch(abs) {
        return;
    }
    if let Some(rule) = paths::protected_rule(abs, ctx) {
        out.add(Category::ProtectedFile, rule, Severity::High);
    }
    if let Some(rule) = crate::sensitive::sensitive_file_rule(abs, true) {
        out.add(Category::SensitiveFile, rule, Severity::High);
    }
    if !paths::inside_project(abs, ctx) {
        let severity = if paths::system(abs) || abs.starts_with('~') {
            Severity::High
        } else {
            Severity::Medium
        };
        out.add(Category::OutsideProject, "write-outside-project", severity);
    }
}

/// What reading the file at `abs` means: a credential read goes to the
/// model's provider with the rest of the transcript.
pub(crate) fn read_rules(abs: &str, ctx: &NativeContext<'_>, out: &mut Findings) {
    if let Some(rule) = crate::sensitive::sensitive_file_rule(abs, true) {
        out.add(Category::SensitiveFile, rule, Severity::High);
    } else if !paths::inside_project(abs, ctx) && !paths::scratch(abs) {
        out.add(
            Category::OutsideProject,
            "read-outside-project",
            Severity::Low,
        );
    }
}
