//! The tools brr offers over MCP, in one table: each has a description and
//! an input schema written for a model, and turns its arguments into the
//! command line whose `--json` document it returns, so that a tool's
//! answer is the CLI's answer (one schema, one code path). Adding a tool is
//! one entry in [`TOOLS`].

use serde_json::{json, Map, Value};

/// The longest capture or window a request may ask for, in seconds: an
/// agent waits for the answer, and one request must not hold the host's
/// perf events or statistics for long.
pub(crate) const MAX_SECONDS: f64 = 60.0;
/// The most program IDs one profile may name.
const MAX_PROGRAM_IDS: usize = 64;
/// The most rows a request may ask for (0 asks for all, as on the CLI).
const MAX_ROWS: u64 = 100_000;

/// One tool.
pub(crate) struct Tool {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// Its arguments' JSON Schema `properties`.
    properties: fn() -> Value,
    required: &'static [&'static str],
    /// The brr command line (after `brr`) its arguments ask for.
    argv: fn(&Given<'_>) -> Result<Vec<String>, String>,
    /// It samples CPUs: a cancelled request stops its capture.
    pub samples: bool,
}

/// Every tool, in the order `tools/list` gives them.
pub(crate) const TOOLS: &[Tool] = &[
    Tool {
        name: "list_programs",
        title: "List loaded eBPF programs",
        description: "List every eBPF program loaded in the kernel (like `brr prog --json`): ID, type, name, tag, load time, the processes holding it, its maps and, when the kernel counts them, run count and run time. Reads counters only; loads nothing and enables nothing. Use it first to find program IDs for `profile`, `dump` and `activity`.",
        properties: extended_only,
        required: &[],
        argv: |g| listing(g, "prog"),
        samples: false,
    },
    Tool {
        name: "list_maps",
        title: "List eBPF maps",
        description: "List every eBPF map in the kernel (like `brr map --json`): ID, type, name, key and value sizes, max entries, memory, the processes holding it. Reads only.",
        properties: extended_only,
        required: &[],
        argv: |g| listing(g, "map"),
        samples: false,
    },
    Tool {
        name: "list_links",
        title: "List eBPF links",
        description: "List every eBPF link (like `brr link --json`): ID, type, the program it attaches and what it is attached to (cgroup, interface, tracepoint, ...). Reads only.",
        properties: extended_only,
        required: &[],
        argv: |g| listing(g, "link"),
        samples: false,
    },
    Tool {
        name: "activity",
        title: "Measure program run counts and run time",
        description: "Measure, over a window of `seconds`, how often each eBPF program ran and how much CPU time it used (like `brr activity --json`): runs, runs per second, average and total run time, CPU percent, busiest first. Keeps the kernel's BPF run-time statistics on during the window (about 20 ns per program run), then restores them. Answers after the window ends.",
        properties: activity_properties,
        required: &[],
        argv: activity,
        samples: false,
    },
    Tool {
        name: "profile",
        title: "Sample which source lines of eBPF programs burn CPU",
        description: "Sample the CPUs for `seconds` with perf and attribute the samples that land in BPF JIT code to programs, source lines, instructions, helpers and kernel functions (like `brr profile --json`): per program its hot source lines, the helpers and kernel functions under each line with `kernel_samples`, who pays (processes, containers), and hints on what to change. One profile runs at a time on the host; a second request while one runs is refused with when the first ends. Cancelling the request stops the capture.",
        properties: profile_properties,
        required: &[],
        argv: profile,
        samples: true,
    },
    Tool {
        name: "cost",
        title: "Measure what eBPF costs this host: program, dispatch, statistics",
        description: "Sample every CPU with kernel call chains for `seconds` while holding the kernel's BPF run-time statistics on, and split each program's CPU into its own code (PROGRAM), its hook's path from the kernel to it and back (DISPATCH: the syscall tracepoint slow path, bpf_trace_run, kprobe handlers, trampolines, XDP/tc/cgroup dispatchers) and the clock reads the statistics add (STATS), as CPU percent and nanoseconds per run (like `brr cost --json`), with the host's total. Dispatch that cannot be tied to a program is reported as unattributed. Shares the one-capture-at-a-time rule with `profile`; cancelling the request stops the capture.",
        properties: cost_properties,
        required: &[],
        argv: cost,
        samples: true,
    },
    Tool {
        name: "dump",
        title: "Show a program's instructions under its source lines",
        description: "Show one program's translated eBPF instructions under their source lines (like `brr dump --json PROG_ID`), with `jited` also its native JIT instructions. Use it with a profile's hot lines to read the code behind them. Reads only.",
        properties: dump_properties,
        required: &["program_id"],
        argv: dump,
        samples: false,
    },
    Tool {
        name: "doctor",
        title: "What brr can do on this host, and why not",
        description: "Check what this host allows (like `brr doctor --json`): kernel features, BTF, the JIT, kptr_restrict, perf settings, capabilities, mounts, who holds run-time statistics on; each with ok, limited or missing, the detail and the fix; then each command with whether it works here. Use it when another tool fails. Changes nothing.",
        properties: no_properties,
        required: &[],
        argv: |_| Ok(args(&["doctor", "--json"])),
        samples: false,
    },
];

/// The tool named `name`.
pub(crate) fn find(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|t| t.name == name)
}

impl Tool {
    /// Its entry in `tools/list`.
    pub(crate) fn listed(&self) -> Value {
        json!({
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": {
                "type": "object",
                "properties": (self.properties)(),
                "required": self.required,
                "additionalProperties": false,
            },
            "annotations": {
                "title": self.title,
                "readOnlyHint": true,
                "destructiveHint": false,
                "idempotentHint": !self.samples,
                "openWorldHint": false,
            },
        })
    }

    /// The command line `arguments` ask for, or why they are refused.
    pub(crate) fn command_line(&self, arguments: &Value) -> Result<Vec<String>, String> {
        let empty = Map::new();
        let map = match arguments {
            Value::Object(m) => m,
            Value::Null => &empty,
            _ => return Err("the arguments must be a JSON object".into()),
        };
        let props = (self.properties)();
        for key in map.keys() {
            if props.get(key).is_none() {
                let known: Vec<&str> = props
                    .as_object()
                    .map(|o| o.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                return Err(match known.is_empty() {
                    true => format!("unknown argument {key:?}: {} takes none", self.name),
                    false => format!(
                        "unknown argument {key:?}: {} takes {}",
                        self.name,
                        known.join(", ")
                    ),
                });
            }
        }
        for key in self.required {
            if !map.contains_key(*key) {
                return Err(format!("argument {key} is required"));
            }
        }
        (self.argv)(&Given(map))
    }
}

/// A call's arguments, checked as they are read.
pub(crate) struct Given<'a>(&'a Map<String, Value>);

impl Given<'_> {
    fn flag(&self, name: &str) -> Result<bool, String> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(format!("argument {name}: expected true or false")),
        }
    }

    /// Seconds in (0, [`MAX_SECONDS`]].
    fn seconds(&self, name: &str, default: f64) -> Result<f64, String> {
        let s = match self.0.get(name) {
            None | Some(Value::Null) => return Ok(default),
            Some(v) => v
                .as_f64()
                .ok_or_else(|| format!("argument {name}: expected a number of seconds"))?,
        };
        if !(s > 0.0 && s <= MAX_SECONDS) {
            return Err(format!(
                "argument {name}: {s} is out of bounds: more than 0 and at most {MAX_SECONDS} seconds"
            ));
        }
        Ok(s)
    }

    /// A whole number in `min..=max`.
    fn whole(&self, name: &str, min: u64, max: u64) -> Result<Option<u64>, String> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => match v.as_u64() {
                Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
                _ => Err(format!(
                    "argument {name}: expected a whole number from {min} to {max}"
                )),
            },
        }
    }

    fn ids(&self, name: &str) -> Result<Vec<u32>, String> {
        let list = match self.0.get(name) {
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(Value::Array(a)) if a.len() <= MAX_PROGRAM_IDS => a,
            Some(_) => {
                return Err(format!(
                    "argument {name}: expected a list of at most {MAX_PROGRAM_IDS} program IDs"
                ))
            }
        };
        list.iter()
            .map(|v| {
                v.as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .filter(|&n| n > 0)
                    .ok_or_else(|| format!("argument {name}: {v} is not a program ID"))
            })
            .collect()
    }
}

fn args(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_string()).collect()
}

fn extended_property() -> Value {
    json!({
        "type": "boolean",
        "default": false,
        "description": "Add the extended fields (`-x`: pinned paths and the rest the wide view shows)."
    })
}

fn extended_only() -> Value {
    json!({ "extended": extended_property() })
}

fn no_properties() -> Value {
    json!({})
}

fn listing(g: &Given<'_>, kind: &str) -> Result<Vec<String>, String> {
    let mut argv = args(&[kind, "--json"]);
    if g.flag("extended")? {
        argv.push("-x".into());
    }
    Ok(argv)
}

fn seconds_property(what: &str, default: u32) -> Value {
    json!({
        "type": "number",
        "exclusiveMinimum": 0,
        "maximum": MAX_SECONDS,
        "default": default,
        "description": what,
    })
}

fn rows_property(what: &str, default: u32) -> Value {
    json!({
        "type": "integer",
        "minimum": 0,
        "maximum": MAX_ROWS,
        "default": default,
        "description": what,
    })
}

fn activity_properties() -> Value {
    json!({
        "seconds": seconds_property("Length of the measuring window in seconds.", 5),
        "limit": rows_property("At most this many programs, busiest first; 0 lists all.", 20),
        "all": {"type": "boolean", "default": false, "description": "Also list programs that did not run during the window."},
        "extended": extended_property(),
    })
}

fn activity(g: &Given<'_>) -> Result<Vec<String>, String> {
    let mut argv = args(&["activity", "--json", "-d"]);
    argv.push(g.seconds("seconds", 5.0)?.to_string());
    if let Some(n) = g.whole("limit", 0, MAX_ROWS)? {
        argv.extend(["--limit".into(), n.to_string()]);
    }
    if g.flag("all")? {
        argv.push("--all".into());
    }
    if g.flag("extended")? {
        argv.push("-x".into());
    }
    Ok(argv)
}

fn frequency_property() -> Value {
    json!({
        "type": "integer", "minimum": 1, "default": 997,
        "description": "Samples per second per CPU; at most the kernel's perf_event_max_sample_rate (a higher one is refused with the limit)."
    })
}

fn program_ids_property(what: &str) -> Value {
    json!({
        "type": "array", "items": {"type": "integer", "minimum": 1},
        "maxItems": MAX_PROGRAM_IDS,
        "description": what,
    })
}

/// `-d SECONDS [-F HZ] [--program-id ID]...`, as `profile` and `cost` take
/// them.
fn capture_args(g: &Given<'_>, argv: &mut Vec<String>) -> Result<(), String> {
    argv.extend(["-d".into(), g.seconds("seconds", 5.0)?.to_string()]);
    if let Some(f) = g.whole("frequency", 1, u64::from(u32::MAX))? {
        argv.extend(["-F".into(), f.to_string()]);
    }
    for id in g.ids("program_ids")? {
        argv.extend(["--program-id".into(), id.to_string()]);
    }
    Ok(())
}

fn cost_properties() -> Value {
    json!({
        "seconds": seconds_property("Capture length in seconds.", 5),
        "frequency": frequency_property(),
        "program_ids": program_ids_property("Report only these programs (IDs from list_programs); empty reports every program that ran or was sampled. The host total always covers every program."),
    })
}

fn cost(g: &Given<'_>) -> Result<Vec<String>, String> {
    let mut argv = args(&["cost", "--json"]);
    capture_args(g, &mut argv)?;
    Ok(argv)
}

fn profile_properties() -> Value {
    json!({
        "seconds": seconds_property("Capture length in seconds.", 5),
        "frequency": frequency_property(),
        "kernel_samples": {
            "type": "boolean", "default": false,
            "description": "Also capture call chains, so that time spent in helpers and kernel functions called from a program is attributed to the program and the source line that called them."
        },
        "program_ids": program_ids_property("Report only these programs (IDs from list_programs); empty reports every program sampled."),
        "annotate": {
            "type": "boolean", "default": false,
            "description": "Add each program's sampled native JIT instructions with their share of samples."
        },
        "limit": rows_property("At most this many programs; 0 lists all.", 20),
        "line_limit": rows_property("At most this many rows per program and list (lines, instructions, helpers); 0 lists all.", 10),
    })
}

fn profile(g: &Given<'_>) -> Result<Vec<String>, String> {
    let mut argv = args(&["profile", "--json"]);
    capture_args(g, &mut argv)?;
    if g.flag("kernel_samples")? {
        argv.push("--kernel-samples".into());
    }
    if g.flag("annotate")? {
        argv.push("--annotate".into());
    }
    for (name, flag) in [("limit", "--limit"), ("line_limit", "--line-limit")] {
        if let Some(n) = g.whole(name, 0, MAX_ROWS)? {
            argv.extend([flag.into(), n.to_string()]);
        }
    }
    Ok(argv)
}

fn dump_properties() -> Value {
    json!({
        "program_id": {"type": "integer", "minimum": 1, "description": "The program's ID (from list_programs)."},
        "jited": {"type": "boolean", "default": false, "description": "Also list the native JIT instructions of each function under its source lines."},
    })
}

fn dump(g: &Given<'_>) -> Result<Vec<String>, String> {
    let id = g
        .whole("program_id", 1, u64::from(u32::MAX))?
        .ok_or("argument program_id is required")?;
    let mut argv = args(&["dump", "--json", &id.to_string()]);
    if g.flag("jited")? {
        argv.push("--jited".into());
    }
    Ok(argv)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(tool: &str, arguments: Value) -> Result<Vec<String>, String> {
        find(tool).unwrap().command_line(&arguments)
    }

    #[test]
    fn arguments_become_the_cli_command_line() {
        assert_eq!(
            line("list_programs", json!({"extended": true})).unwrap(),
            ["prog", "--json", "-x"]
        );
        assert_eq!(line("list_links", Value::Null).unwrap(), ["link", "--json"]);
        assert_eq!(
            line("activity", json!({"seconds": 0.5, "limit": 0, "all": true})).unwrap(),
            ["activity", "--json", "-d", "0.5", "--limit", "0", "--all"]
        );
        assert_eq!(
            line(
                "profile",
                json!({"seconds": 2, "frequency": 499, "kernel_samples": true,
                       "program_ids": [7, 9], "annotate": true})
            )
            .unwrap(),
            [
                "profile",
                "--json",
                "-d",
                "2",
                "-F",
                "499",
                "--program-id",
                "7",
                "--program-id",
                "9",
                "--kernel-samples",
                "--annotate"
            ]
        );
        assert_eq!(
            line(
                "cost",
                json!({"seconds": 3, "frequency": 199, "program_ids": [5]})
            )
            .unwrap(),
            [
                "cost",
                "--json",
                "-d",
                "3",
                "-F",
                "199",
                "--program-id",
                "5"
            ]
        );
        assert_eq!(
            line("dump", json!({"program_id": 42, "jited": true})).unwrap(),
            ["dump", "--json", "42", "--jited"]
        );
        assert_eq!(line("doctor", json!({})).unwrap(), ["doctor", "--json"]);
    }

    #[test]
    fn bad_arguments_are_refused_with_a_reason() {
        let refused = |tool, args| line(tool, args).unwrap_err();
        assert!(refused("profile", json!({"seconds": 61})).contains("at most 60"));
        assert!(refused("activity", json!({"seconds": 0})).contains("out of bounds"));
        assert!(refused("activity", json!({"seconds": "5"})).contains("number"));
        assert!(refused("profile", json!({"program_ids": [0]})).contains("not a program ID"));
        assert!(refused("cost", json!({"seconds": 60.5})).contains("at most 60"));
        assert!(refused("cost", json!({"frequency": 0})).contains("whole number"));
        assert!(refused("cost", json!({"kernel_samples": true})).contains("takes"));
        let many: Vec<u32> = (1..=65).collect();
        assert!(refused("profile", json!({"program_ids": many})).contains("at most 64"));
        assert!(refused("dump", json!({})).contains("program_id is required"));
        assert!(refused("dump", json!({"program_id": -1})).contains("whole number"));
        assert!(refused("list_maps", json!({"x": 1})).contains("takes extended"));
        assert!(refused("doctor", json!({"x": 1})).contains("takes none"));
        assert!(refused("list_maps", json!([1])).contains("JSON object"));
        assert!(refused("list_maps", json!({"extended": 1})).contains("true or false"));
    }

    #[test]
    fn every_tool_lists_a_closed_schema_and_every_command_line_parses() {
        for t in TOOLS {
            let listed = t.listed();
            assert_eq!(listed["inputSchema"]["type"], "object", "{}", t.name);
            assert_eq!(listed["inputSchema"]["additionalProperties"], false);
            let args = match t.name {
                "dump" => json!({"program_id": 1}),
                _ => json!({}),
            };
            let argv: Vec<std::ffi::OsString> = t
                .command_line(&args)
                .unwrap()
                .into_iter()
                .map(Into::into)
                .collect();
            assert!(
                matches!(crate::cli::parse(&argv), Ok(crate::cli::Parsed::Run(_))),
                "{}: {argv:?}",
                t.name
            );
        }
    }
}
