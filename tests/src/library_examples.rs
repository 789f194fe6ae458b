//! toolhost's examples that derive serde's traits, run as this package's
//! doctests: the README's code blocks and the snippets in toolhost's
//! `src/doc/`, which its docs show but its own doctests skip (serde's
//! derive is no dependency of toolhost, so that its examples build only the
//! library's crates; this package has it). `cargo test` at the repository
//! root runs them with the rest.
//!
//! Each item below exists only while rustdoc collects doctests.

/// The README.
#[doc = include_str!("../../README.md")]
pub struct Readme;

/// The crate docs: a host and a tool.
#[doc = include_str!("../../src/doc/host.md")]
pub struct Host;

/// The crate docs: typed tools and `?`.
#[doc = include_str!("../../src/doc/typed_tools.md")]
pub struct TypedTools;

/// The crate docs: state shared between handlers.
#[doc = include_str!("../../src/doc/shared_state.md")]
pub struct SharedState;

/// The crate docs: tools that come and go (the notes application).
#[doc = include_str!("../../src/doc/notes_app.md")]
pub struct NotesApp;

/// The crate docs: testing a tool.
#[doc = include_str!("../../src/doc/testing_a_tool.md")]
pub struct TestingATool;

/// `StaticSurface`.
#[doc = include_str!("../../src/doc/static_surface.md")]
pub struct StaticSurface;

/// `StaticSurface::typed`.
#[doc = include_str!("../../src/doc/static_surface_typed.md")]
pub struct StaticSurfaceTyped;

/// `SurfaceBuilder`.
#[doc = include_str!("../../src/doc/surface_builder.md")]
pub struct SurfaceBuilder;

/// `Tool::input_schema_for` (feature `schemars`).
#[cfg(feature = "schemars")]
#[doc = include_str!("../../src/doc/input_schema_for.md")]
pub struct InputSchemaFor;
