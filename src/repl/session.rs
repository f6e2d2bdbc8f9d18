//! One REPL session: one scope for every line, functions and imports that persist, the
//! reedline loop, and cleanups at the end.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use reedline::{
    ColumnarMenu, DefaultHinter, DefaultPrompt, DefaultPromptSegment, Emacs, FileBackedHistory,
    KeyCode, KeyModifiers, MenuBuilder, Reedline, ReedlineEvent, ReedlineMenu, Signal,
    default_emacs_keybindings,
};
use rhai::{AST, Dynamic, Engine, Position, Scope};

use super::commands::{self, COMMANDS, Command};
use super::completer::{Known, RhaiCompleter};
use super::highlighter::RhaiHighlighter;
use super::pretty;
use super::validator::RhaiValidator;
use crate::clock::{Clock, VirtualClock, format_duration, parse_duration};
use crate::script::{Diagnostic, Extension, Host, build_engine, function_docs, run_cleanups};

/// Where the session's calls go.
pub struct ReplTarget {
    pub clock: Arc<dyn Clock>,
    /// The twin's clock, when the session runs on the twin (for `:advance`).
    pub virtual_clock: Option<Arc<VirtualClock>>,
    pub extensions: Vec<Arc<dyn Extension>>,
    /// Words for `:target`.
    pub description: String,
    /// Errors show their cause chain (`--verbose`).
    pub verbose: bool,
}

pub struct Repl {
    host: Arc<Host>,
    engine: Engine,
    scope: Scope<'static>,
    /// Every function defined so far (no statements).
    functions: AST,
    known: Arc<Mutex<Known>>,
    target: ReplTarget,
    inputs: usize,
}

const SOURCE: &str = "<repl>";

impl Repl {
    pub fn new(host: Arc<Host>, target: ReplTarget) -> Self {
        let engine = build_engine(&host, &target.extensions);
        let known = Known {
            functions: function_docs(&engine),
            ..Known::default()
        };
        Self {
            host,
            engine,
            scope: Scope::new(),
            functions: AST::empty(),
            known: Arc::new(Mutex::new(known)),
            target,
            inputs: 0,
        }
    }

    fn history_path() -> Option<PathBuf> {
        let data = std::env::var_os("XDG_DATA_HOME")
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local/share"))
            })?;
        let dir = data.join("runbook");
        std::fs::create_dir_all(&dir).ok()?;
        Some(dir.join("repl-history"))
    }

    fn editor(&self) -> Reedline {
        let mut keybindings = default_emacs_keybindings();
        keybindings.add_binding(
            KeyModifiers::NONE,
            KeyCode::Tab,
            ReedlineEvent::UntilFound(vec![
                ReedlineEvent::Menu("completion_menu".into()),
                ReedlineEvent::MenuNext,
            ]),
        );
        let menu = ColumnarMenu::default().with_name("completion_menu");
        let mut editor = Reedline::create()
            .with_edit_mode(Box::new(Emacs::new(keybindings)))
            .with_validator(Box::new(RhaiValidator::new()))
            .with_highlighter(Box::new(RhaiHighlighter))
            .with_completer(Box::new(RhaiCompleter {
                known: self.known.clone(),
            }))
            .with_quick_completions(true)
            .with_partial_completions(true)
            .with_menu(ReedlineMenu::EngineCompleter(Box::new(menu)))
            .with_hinter(Box::new(
                DefaultHinter::default().with_style(nu_ansi_term::Style::new().dimmed()),
            ));
        if let Some(path) = Self::history_path()
            && let Ok(history) = FileBackedHistory::with_file(1000, path)
        {
            editor = editor.with_history(Box::new(history));
        }
        editor
    }

    /// The interactive loop; returns when the user quits.
    pub fn run(&mut self) {
        let mut editor = self.editor();
        let prompt = DefaultPrompt::new(
            DefaultPromptSegment::Basic("runbook".into()),
            DefaultPromptSegment::Empty,
        );
        println!(
            "runbook repl on {}. :help for commands, Tab completes, Ctrl-D quits.",
            self.target.description
        );
        loop {
            match editor.read_line(&prompt) {
                Ok(Signal::Success(line)) => {
                    if !self.handle(&line) {
                        break;
                    }
                }
                Ok(Signal::CtrlC) => {}
                Ok(Signal::CtrlD) => break,
                Ok(_) => {}
                Err(error) => {
                    eprintln!("error: the terminal failed: {error}");
                    break;
                }
            }
        }
        self.quit();
    }

    /// Runs one input; false when the session should end.
    pub fn handle(&mut self, line: &str) -> bool {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            return true;
        }
        if trimmed.starts_with(':') {
            return match commands::parse(trimmed) {
                Ok(Command::Quit) => false,
                Ok(command) => {
                    self.command(command);
                    true
                }
                Err(message) => {
                    eprintln!("error: {message}");
                    true
                }
            };
        }
        match self.eval(line, SOURCE) {
            Ok(value) => {
                if let Some(text) = pretty::render(&value) {
                    println!("{}", pretty::trim(&text));
                }
            }
            Err(diagnostic) => eprint!(
                "{}",
                diagnostic.render(&self.host.sources, self.target.verbose)
            ),
        }
        true
    }

    /// Registers the modules an input imports, so later lines can call them too.
    fn keep_imports(&mut self, text: &str) {
        for line in text.lines() {
            let line = line.trim();
            let Some(rest) = line.strip_prefix("import ") else {
                continue;
            };
            let Some((path, alias)) = rest.split_once(" as ") else {
                continue;
            };
            let path = path.trim().trim_matches('"');
            let alias = alias.trim().trim_end_matches(';').trim();
            if let Ok(module) =
                self.engine
                    .module_resolver()
                    .resolve(&self.engine, None, path, Position::NONE)
            {
                self.engine.register_static_module(alias, module);
                let mut known = self
                    .known
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                known.modules.push(alias.to_string());
                known.functions = function_docs(&self.engine);
            }
        }
    }

    fn eval(&mut self, text: &str, source: &str) -> Result<Dynamic, Box<Diagnostic>> {
        self.inputs += 1;
        self.host.interrupt.reset();
        let name = if source == SOURCE {
            format!("<repl:{}>", self.inputs)
        } else {
            source.to_string()
        };
        self.host.sources.insert(&name, text);
        let mut ast = self
            .engine
            .compile_with_scope(&self.scope, text)
            .map_err(|e| {
                Box::new(
                    Diagnostic::from_parse(&e, &name).suggest(&self.engine, &self.host.sources),
                )
            })?;
        ast.set_source(name.as_str());
        let runnable = self.functions.merge(&ast);
        // A bug in runbook (a panic) ends this input, not the session and its cleanups.
        let (engine, scope) = (&self.engine, &mut self.scope);
        let result = match crate::script::at_run_boundary(|| {
            engine.eval_ast_with_scope::<Dynamic>(scope, &runnable)
        }) {
            Ok(result) => result,
            Err(panic) => {
                return Err(Box::new(crate::script::panic_diagnostic(
                    &panic,
                    "this is a bug in runbook: this input stopped there and the session goes on; please report it with the command that caused it (RUNBOOK_BACKTRACE=1 for details)",
                )));
            }
        };
        self.functions = self.functions.merge(&ast.clone_functions_only());
        self.keep_imports(text);
        self.refresh_known();
        self.host.interrupt.reset();
        result.map_err(|e| {
            Box::new(Diagnostic::from_eval(&e, &name).suggest(&self.engine, &self.host.sources))
        })
    }

    fn refresh_known(&self) {
        let mut known = self
            .known
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        known.variables = self
            .scope
            .iter()
            .map(|(name, _, value)| (name.to_string(), value))
            .collect();
    }

    fn command(&mut self, command: Command) {
        match command {
            Command::Help(None) => self.help(),
            Command::Help(Some(name)) => self.help_on(&name),
            Command::Time => self.time(),
            Command::Advance(text) => self.advance(&text),
            Command::Target => println!("{}", self.target.description),
            Command::Load(path) => self.load(&path),
            Command::Quit => {}
        }
    }

    /// `:help`: the commands, and the modules whose functions `:help MODULE` lists.
    fn help(&self) {
        println!("commands:");
        for (name, help) in COMMANDS {
            println!("  {name:<9} {help}");
        }
        let known = self
            .known
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut modules: Vec<&str> = known
            .functions
            .iter()
            .map(|d| {
                if d.module.is_empty() {
                    "core"
                } else {
                    d.module.as_str()
                }
            })
            .collect();
        modules.dedup();
        println!(
            "modules: {} (:help MODULE lists its functions)",
            modules.join(", ")
        );
    }

    /// `:help NAME`: the signature and doc of a function, or of every function of a module.
    fn help_on(&self, name: &str) {
        let known = self
            .known
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let wanted = name.trim_end_matches("::");
        let matches: Vec<_> = known
            .functions
            .iter()
            .filter(|d| {
                let qualified = if d.module.is_empty() {
                    d.name.clone()
                } else {
                    format!("{}::{}", d.module, d.name)
                };
                qualified == wanted
                    || d.module == wanted
                    || (wanted == "core" && d.module.is_empty())
            })
            .collect();
        if matches.is_empty() {
            eprintln!("error: no function or module `{name}`; :help lists modules");
        }
        for doc in matches {
            println!("{}", doc.signature);
            for line in doc.doc.lines() {
                println!("    {line}");
            }
        }
    }

    /// `:time`: how long the session has run, on its clock.
    fn time(&self) {
        let kind = if self.target.clock.is_virtual() {
            "virtual"
        } else {
            "real"
        };
        println!(
            "{kind} clock: {} since the session started",
            format_duration(self.host.virtual_elapsed())
        );
    }

    /// `:advance DURATION`: the twin's virtual clock moved on.
    fn advance(&self, text: &str) {
        match (&self.target.virtual_clock, parse_duration(text)) {
            (Some(clock), Ok(by)) => {
                clock.advance(by);
                println!(
                    "virtual clock moved on {}: {} since the session started",
                    format_duration(by),
                    format_duration(self.host.virtual_elapsed())
                );
            }
            (None, _) => eprintln!(
                "error: :advance moves the lab twin's virtual clock; this session runs on the real clock"
            ),
            (_, Err(error)) => eprintln!("error: {error}"),
        }
    }

    /// Runs a runbook into the session; the cleanups it registered run when it ends.
    fn load(&mut self, path: &str) {
        let text = match crate::sandbox::read_text_file(
            std::path::Path::new(path),
            crate::sandbox::TEXT_FILE_LIMIT,
        ) {
            Ok(text) => text,
            Err(error) => {
                eprintln!("error: cannot read {path}: {error}");
                return;
            }
        };
        let mark = self.host.pending_defers();
        let result = self.eval(&text, path);
        run_cleanups(&self.host, &mut self.engine, &self.functions, mark);
        match result {
            Ok(_) => println!("loaded {path}"),
            Err(diagnostic) => eprint!(
                "{}",
                diagnostic.render(&self.host.sources, self.target.verbose)
            ),
        }
    }

    /// Runs every pending cleanup.
    pub fn quit(&mut self) {
        run_cleanups(&self.host, &mut self.engine, &self.functions, 0);
    }
}
