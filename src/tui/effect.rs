//! What the event loop must do after a key or a worker message: the one
//! type both views (`app`, `drill`) return, kept apart from either so that
//! neither view imports the other's state to name it.

use super::worker::{Cmd, CostJob, ProfileJob};

/// An outside effect the state machine asks for; the loop in `tui/mod.rs`
/// carries it out.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Effect {
    Cmd(Cmd),
    Profile(ProfileJob),
    /// `C`: a cost capture, on the same job as profiles (cancelled alike).
    Cost(CostJob),
    CancelProfile,
    Quit,
}
