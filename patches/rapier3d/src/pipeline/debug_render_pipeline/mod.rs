pub use self::debug_render_backend::{DebugRenderBackend, DebugRenderObject};
pub use self::debug_render_pipeline::{DebugRenderMode, DebugRenderPipeline};
pub use self::debug_render_style::{DebugColor, DebugRenderStyle};

mod debug_render_backend;
mod debug_render_pipeline;
mod debug_render_style;
mod outlines;
