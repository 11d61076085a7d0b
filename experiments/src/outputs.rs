//! The files a command will write, checked before any work: each can be written, none is
//! named twice, and none would replace a file the command reads.

use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};
use renderer::output::{OutputTarget, check_writable, replaces_input, resolve_output};

/// Output files, each with the flag that names it.
///
/// ```
/// use experiments::outputs::Outputs;
///
/// let csv = std::env::temp_dir().join(format!("raylb-outputs-{}.csv", std::process::id()));
/// let mut outputs = Outputs::new();
/// outputs.add("--csv", Some(&csv)).add("--image", None);
/// outputs.check_writable()?;
/// outputs.check_inputs(&["scenes/quick.toml".into()])?;
/// // The check leaves nothing behind.
/// assert!(!csv.exists());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct Outputs {
    files: Vec<(&'static str, PathBuf)>,
    /// A flag that writes to standard output of itself (`--json`).
    stdout: Option<&'static str>,
}

impl Outputs {
    /// No outputs yet.
    ///
    /// ```
    /// # use experiments::outputs::Outputs;
    /// assert!(Outputs::new().check_writable().is_ok());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `path`, named by `flag`, if given.
    ///
    /// ```
    /// # use experiments::outputs::Outputs;
    /// # let csv = std::env::temp_dir().join(format!("raylb-add-{}.csv", std::process::id()));
    /// let mut outputs = Outputs::new();
    /// outputs.add("--csv", Some(&csv)).add("--plot", Some(&csv));
    /// assert!(outputs.check_writable().is_err());
    /// ```
    pub fn add(&mut self, flag: &'static str, path: Option<&Path>) -> &mut Self {
        if let Some(path) = path {
            self.files.push((flag, path.to_path_buf()));
        }
        self
    }

    /// Notes that `flag`, if `given`, writes to standard output: no output file may then
    /// be standard output too.
    ///
    /// ```
    /// # use experiments::outputs::Outputs;
    /// let mut outputs = Outputs::new();
    /// outputs.add("--stats", Some("/dev/stdout".as_ref())).writes_to_stdout("--json", true);
    /// let refused = outputs.check_writable().unwrap_err();
    /// assert_eq!(refused.to_string(), "--json and --stats /dev/stdout both write to standard output");
    /// ```
    pub fn writes_to_stdout(&mut self, flag: &'static str, given: bool) -> &mut Self {
        if given {
            self.stdout = Some(flag);
        }
        self
    }

    /// Checks that every output can be written and none is named twice, nor two of them
    /// standard output.
    ///
    /// ```
    /// # use experiments::outputs::Outputs;
    /// let missing = std::env::temp_dir().join(format!("raylb-no-folder-{}", std::process::id()));
    /// let mut outputs = Outputs::new();
    /// outputs.add("--csv", Some(&missing.join("sweep.csv")));
    /// assert!(outputs.check_writable().is_err());
    /// ```
    pub fn check_writable(&self) -> Result<()> {
        let mut on_stdout: Vec<String> = self.stdout.iter().map(|f| f.to_string()).collect();
        on_stdout.extend(
            self.files
                .iter()
                .filter(|(_, path)| resolve_output(path) == Ok(OutputTarget::Stdout))
                .map(|(flag, path)| format!("{flag} {}", path.display())),
        );
        if let [first, second, ..] = &on_stdout[..] {
            bail!("{first} and {second} both write to standard output");
        }
        for (i, (_, path)) in self.files.iter().enumerate() {
            check_writable(path).map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
            if let Some((_, other)) = self.files[..i]
                .iter()
                .find(|(_, p)| place(p) == place(path))
            {
                if other == path {
                    bail!("{} is named as two outputs", path.display());
                }
                bail!(
                    "{} and {} are one file, named as two outputs",
                    other.display(),
                    path.display()
                );
            }
        }
        Ok(())
    }

    /// Checks that no output is one of `inputs` (under any name or link). Call it once before
    /// any work with what the command line names, and again once the scene has been read
    /// with every file it read.
    ///
    /// ```
    /// # use experiments::outputs::Outputs;
    /// let scene = std::env::temp_dir().join(format!("raylb-input-{}.toml", std::process::id()));
    /// std::fs::write(&scene, "")?;
    /// let mut outputs = Outputs::new();
    /// outputs.add("--csv", Some(&scene));
    /// assert!(outputs.check_inputs(&[scene.clone()]).is_err());
    /// std::fs::remove_file(&scene)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn check_inputs(&self, inputs: &[PathBuf]) -> Result<()> {
        for (flag, path) in &self.files {
            if let Some(input) = replaces_input(path, inputs) {
                bail!(
                    "{flag} {}: is {}, an input of this run; raylb never writes over what it reads",
                    path.display(),
                    input.display()
                );
            }
        }
        Ok(())
    }
}

/// Where `path` puts its file: its folder, resolved, and its name (`q.png` and `./q.png` are
/// one place). The folder exists once [`check_writable`] has passed.
fn place(path: &Path) -> (Option<PathBuf>, Option<&std::ffi::OsStr>) {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    (dir.canonicalize().ok(), path.file_name())
}
