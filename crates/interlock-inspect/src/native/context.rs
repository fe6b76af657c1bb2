//! Where the agent works: its working directory, its project, its home.

/// Where the agent works.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NativeContext<'a> {
    /// The working directory the action runs in (absolute).
    pub cwd: &'a str,
    /// The project's root, when the client names it (a workspace root);
    /// otherwise the working directory is the project.
    pub project: Option<&'a str>,
    /// The user's home directory, when known (`~` is expanded to it).
    pub home: Option<&'a str>,
}

impl<'a> NativeContext<'a> {
    pub(crate) fn projects(&self) -> impl Iterator<Item = &'a str> {
        std::iter::once(self.project.unwrap_or(self.cwd))
    }
}
