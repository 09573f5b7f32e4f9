//! `brr completions SHELL` and `brr man`.

use clap_complete::Shell;

/// The completion script for `shell`, without its final newline (the
/// caller prints one).
pub(super) fn completions(shell: Shell) -> String {
    let mut cmd = super::command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "brr", &mut buf);
    let text = String::from_utf8_lossy(&buf);
    text.trim_end_matches('\n').to_string()
}

/// One roff document: the root page, then a page per subcommand, so that
/// `man -l` shows everything the command line accepts.
pub(super) fn man_page() -> String {
    let mut cmd = super::command();
    cmd.build();
    let mut buf = Vec::new();
    // Writing into a Vec cannot fail; a failure would only shorten the page.
    let _ = clap_mangen::Man::new(cmd.clone()).render(&mut buf);
    for sub in cmd.get_subcommands() {
        let name = sub.get_name();
        let page = sub
            .clone()
            .name(format!("brr-{name}"))
            .bin_name(format!("brr {name}"));
        let _ = clap_mangen::Man::new(page).render(&mut buf);
    }
    let text = String::from_utf8_lossy(&buf);
    text.trim_end_matches('\n').to_string()
}
