//! `brr completions SHELL` and `brr man`: the manual pages, one per
//! command, with the sections clap cannot know (exit status, privileges,
//! the TUI's keys, examples, see also).

use clap_complete::Shell;

use crate::tui::app::MAIN_HELP;
use crate::tui::drill::HELP_ROWS;

/// The completion script for `shell`, without its final newline (the
/// caller prints one).
pub(super) fn completions(shell: Shell) -> String {
    let mut cmd = super::command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "brr", &mut buf);
    let text = String::from_utf8_lossy(&buf);
    text.trim_end_matches('\n').to_string()
}

/// One roff document: every page of [`man_pages`] in turn, so that
/// `man -l` shows everything the command line accepts.
pub(super) fn man_page() -> String {
    let pages: Vec<String> = man_pages().into_iter().map(|(_, page)| page).collect();
    pages.concat().trim_end_matches('\n').to_string()
}

/// The manual pages by file name: `brr.1`, then `brr-COMMAND.1` for each
/// command, which `brr.1`'s COMMANDS and SEE ALSO name.
pub(crate) fn man_pages() -> Vec<(String, String)> {
    let mut cmd = super::command();
    cmd.build();
    let subs: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    let mut pages = vec![("brr.1".to_string(), root_page(&cmd, &subs))];
    for sub in cmd.get_subcommands() {
        let name = sub.get_name();
        let page = sub
            .clone()
            .name(format!("brr-{name}"))
            .bin_name(format!("brr {name}"));
        pages.push((format!("brr-{name}.1"), command_page(page, name)));
    }
    pages
}

fn root_page(cmd: &clap::Command, subs: &[String]) -> String {
    let man = clap_mangen::Man::new(cmd.clone());
    let mut buf = Vec::new();
    // Writing into a Vec cannot fail; a failure would only shorten the page.
    let _ = man.render_title(&mut buf);
    let _ = man.render_name_section(&mut buf);
    let _ = man.render_synopsis_section(&mut buf);
    let _ = man.render_description_section(&mut buf);
    let _ = man.render_options_section(&mut buf);
    let _ = man.render_subcommands_section(&mut buf);
    let mut page = String::from_utf8_lossy(&buf).into_owned();
    page.push_str(&section("EXIT STATUS", &exit_status()));
    page.push_str(&section("PRIVILEGES", &privileges()));
    page.push_str(&section("KEYS", &keys()));
    page.push_str(&section("EXAMPLES", &examples(ROOT_EXAMPLES)));
    let refs: Vec<String> = subs.iter().map(|s| format!("brr-{s}")).collect();
    page.push_str(&section("SEE ALSO", &see_also(&refs)));
    let mut buf = Vec::new();
    let _ = man.render_version_section(&mut buf);
    page.push_str(&String::from_utf8_lossy(&buf));
    page
}

fn command_page(cmd: clap::Command, name: &str) -> String {
    let mut buf = Vec::new();
    let _ = clap_mangen::Man::new(cmd).render(&mut buf);
    let mut page = String::from_utf8_lossy(&buf).into_owned();
    page.push_str(&section("EXIT STATUS", &exit_status()));
    if name == "top" {
        page.push_str(&section("KEYS", &keys()));
    }
    if let Some((_, own)) = COMMAND_EXAMPLES
        .iter()
        .find(|(command, _)| *command == name)
    {
        page.push_str(&section("EXAMPLES", &examples(own)));
    }
    let mut refs = vec!["brr".to_string()];
    if name != "doctor" {
        refs.push("brr-doctor".into());
    }
    page.push_str(&section("SEE ALSO", &see_also(&refs)));
    page
}

/// A section of roff lines (already escaped).
fn section(title: &str, body: &str) -> String {
    format!(".SH \"{title}\"\n{body}")
}

/// Text as roff: backslashes and hyphens escaped, no line starting with a
/// control character.
fn roff(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    if escaped.starts_with(['.', '\'']) {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

/// A paragraph per entry, tagged by its first element.
fn tagged(rows: &[(&str, &str)]) -> String {
    rows.iter()
        .map(|(tag, text)| format!(".TP\n\\fB{}\\fR\n{}\n", roff(tag), roff(text)))
        .collect()
}

fn exit_status() -> String {
    tagged(&[
        ("0", "Success, also for an empty listing."),
        (
            "1",
            "An expected failure: no program with the ID given, or stdout cannot be written (a closed pipe is not an error).",
        ),
        (
            "2",
            "A usage error (one brr COMMAND: error: line on stderr) or a missing privilege (brr: permission denied while ...).",
        ),
        ("3", "A kernel feature that this host does not offer."),
        ("101", "An internal error: a bug, reported in one line."),
    ])
}

fn privileges() -> String {
    [
        ".PP",
        &roff("Listing loaded objects, opening them by ID and turning on run-time statistics need CAP_SYS_ADMIN; CAP_BPF is not enough. Sampling with perf events (profile, perf-events, the drilldown's profile) needs CAP_PERFMON or CAP_SYS_ADMIN, or kernel.perf_event_paranoid <= 0. Seeing kernel addresses (JIT code, helper-call targets, the addresses profile attributes samples by) needs CAP_SYSLOG while kernel.kptr_restrict is 1."),
        ".PP",
        &roff("Run brr as root, or give one copy of the binary CAP_SYS_ADMIN and CAP_SYSLOG (setcap cap_sys_admin,cap_syslog+ep) and restrict who may run it. brr doctor lists what this host allows, command by command, in the words each command fails with. brr only observes: it never loads, attaches or changes a BPF object and never writes a sysctl."),
        "",
    ]
    .join("\n")
}

fn keys() -> String {
    let mut out = format!(".PP\n{}\n", roff("The live table (brr, brr top):"));
    out.push_str(&tagged(&MAIN_HELP));
    out.push_str(&format!(
        ".PP\n{}\n",
        roff("The drilldown of one program (Enter, or --program-id ID):")
    ));
    out.push_str(&tagged(&HELP_ROWS));
    out
}

/// Each example: a command line, then what it does.
fn examples(rows: &[(&str, &str)]) -> String {
    tagged(rows)
}

fn see_also(pages: &[String]) -> String {
    let refs: Vec<String> = pages
        .iter()
        .map(|p| format!("\\fB{}\\fR(1)", roff(p)))
        .collect();
    format!("{}\n", refs.join(",\n"))
}

const ROOT_EXAMPLES: &[(&str, &str)] = &[
    ("sudo brr", "The live top view of every program."),
    (
        "sudo brr prog -x",
        "Every loaded program with its owners, attach points and memory.",
    ),
    (
        "sudo brr activity -d 5",
        "CPU% and executions per second of each program over 5 seconds.",
    ),
    (
        "sudo brr profile -d 10",
        "Which source lines of which programs burn CPU, sampled for 10 seconds.",
    ),
    ("brr doctor", "What this host allows, and why not."),
];

/// Each command's own examples.
const COMMAND_EXAMPLES: &[(&str, &[(&str, &str)])] = &[
    (
        "prog",
        &[
            (
                "sudo brr prog -x",
                "Programs with their tags, pins, owners, attach points and memory.",
            ),
            (
                "sudo brr --json prog --stats",
                "Programs with run counts and run time, as JSON.",
            ),
        ],
    ),
    (
        "activity",
        &[
            (
                "sudo brr activity -d 5",
                "Each program's CPU% over 5 seconds.",
            ),
            (
                "sudo brr activity --interval 1 --count 10",
                "Ten one-second windows, one after the other.",
            ),
        ],
    ),
    (
        "top",
        &[
            (
                "sudo brr top",
                "The live table; Enter opens a program's drilldown.",
            ),
            (
                "sudo brr top --textmode -d 2 --profile-top",
                "One text snapshot, with the busiest program profiled.",
            ),
        ],
    ),
    (
        "map",
        &[(
            "sudo brr map -x",
            "Maps with their pins, owners and memory.",
        )],
    ),
    (
        "link",
        &[("sudo brr link -x", "Links with their pins and owners.")],
    ),
    (
        "btf",
        &[(
            "sudo brr btf -x",
            "BTF objects with the programs and maps that use them.",
        )],
    ),
    (
        "perf-events",
        &[(
            "sudo brr perf-events",
            "The perf events this host can sample with.",
        )],
    ),
    (
        "dump",
        &[(
            "sudo brr dump ID --jited",
            "Program ID's instructions under their source lines, with its native code.",
        )],
    ),
    (
        "dump-compare",
        &[(
            "sudo brr dump-compare ID",
            "brr's instruction-to-line mapping of program ID beside bpftool's.",
        )],
    ),
    (
        "profile",
        &[
            (
                "sudo brr profile -d 10",
                "Every program's hot source lines, sampled for 10 seconds.",
            ),
            (
                "sudo brr profile -d 5 --program-id ID --annotate",
                "Program ID's sampled native instructions.",
            ),
            (
                "sudo brr profile -d 10 --pprof cpu.pb.gz",
                "The same capture written as a pprof profile too.",
            ),
        ],
    ),
    (
        "exporter",
        &[(
            "sudo brr exporter",
            "Serve Prometheus metrics on the loopback address.",
        )],
    ),
    (
        "doctor",
        &[
            (
                "brr doctor",
                "What this host allows, check by check and command by command.",
            ),
            ("brr doctor --json", "The same as JSON."),
        ],
    ),
    (
        "completions",
        &[(
            "brr completions bash > /usr/share/bash-completion/completions/brr",
            "Install bash completions.",
        )],
    ),
    (
        "man",
        &[
            (
                "brr man > brr.1 && man -l brr.1",
                "Read every page as one document.",
            ),
            (
                "brr man --dir man1",
                "Write brr.1 and one brr-COMMAND.1 per command into man1/.",
            ),
        ],
    ),
];
