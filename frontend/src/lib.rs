//! The hydrate entry point. The server renders every page in full (pages work
//! with JavaScript off); this crate, compiled to wasm32 by `scripts/build-site`,
//! attaches the same components to that HTML so the interactive parts (copy
//! buttons, client tabs) come alive. It holds no logic of its own.

#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(app::App);
}
