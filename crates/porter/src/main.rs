//! The `porter` binary. Everything it does is in `porter-cli`; this crate
//! is only the program's root, so that the release profile can give it an
//! optimisation level of its own. The whole program is optimised once more
//! as one module at link time (fat LTO), at the level of the crate that is
//! linked: this one. At 3, loops are vectorised there, which the readers
//! and decoders compiled at 3 count on; the code of every other crate keeps
//! the size attributes it was compiled with, where code instantiated in
//! this crate would not (the servers' generic code was, when the command
//! lived here: 3.9 MiB more).

use std::process::ExitCode;

fn main() -> ExitCode {
    porter_cli::main()
}
