//! The account settings page (`/settings`): the defaults the report view
//! and the tax section of `get_report` and `get_positions` use when a call
//! names none (jurisdiction, cost-basis method, currency, how unlabelled
//! transfers are read), and the locale numbers are written in. One plain
//! form POSTed with the session's CSRF token; the server answers a 303 back
//! here with "Saved" (post/redirect/get), or this page again with the
//! refusal next to its field. Works with JavaScript off.

use leptos::prelude::*;
use leptos_meta::Title;

use crate::{
    frame::{PortalPage, csrf_field, refused, with_portal},
    views::{Choice, FieldError, SettingsView},
};

fn field_error(error: &Option<FieldError>, field: &str) -> Option<AnyView> {
    error.as_ref().filter(|e| e.field == field).map(|e| {
        view! { <p class="field-error" role="alert" id=format!("{field}-error")>{e.message.clone()}</p> }
            .into_any()
    })
}

/// A select of `choices` with `current` selected.
pub(crate) fn options(choices: &[Choice], current: &str) -> impl IntoView + use<> {
    choices
        .iter()
        .map(|c| {
            view! { <option value=c.value.clone() selected={c.value == current}>{c.label.clone()}</option> }
        })
        .collect_view()
}

#[component]
pub fn SettingsPage() -> impl IntoView {
    with_portal(|portal| {
        let settings = match portal.page {
            PortalPage::Settings(settings) => *settings,
            PortalPage::Refused(message) => return refused(message),
            _ => SettingsView::default(),
        };
        let viewer = portal.viewer;
        let error = settings.error.clone();
        view! {
            <Title text="Ledger: settings"/>
            <h1>"Settings"</h1>
            {settings.notice.clone().map(|n| view! { <p class="notice" role="status" id="settings-notice">{n}</p> })}
            <p class="meta">"Your defaults for reports: every report view, and the tax section of get_report and get_positions when a call names none. A report page can still choose others for one reading."</p>
            {(!settings.saved).then(|| view! {
                <p class="meta" id="settings-unsaved">"You have saved no settings yet: these are the defaults (United States rules in USD, numbers as your browser asks)."</p>
            })}
            <form method="post" action="/settings" class="stack" id="settings-form">
                {csrf_field(&viewer)}
                <label for="settings-jurisdiction">"Tax jurisdiction"</label>
                <select id="settings-jurisdiction" name="jurisdiction">
                    {options(&settings.jurisdictions, &settings.jurisdiction)}
                </select>
                {field_error(&error, "jurisdiction")}
                <label for="settings-method">"Cost-basis method"</label>
                <select id="settings-method" name="method">
                    {options(&settings.methods, &settings.method)}
                </select>
                {field_error(&error, "method")}
                <label for="settings-currency">"Reporting currency"</label>
                <select id="settings-currency" name="currency">
                    {options(&settings.currencies, &settings.currency)}
                </select>
                {field_error(&error, "currency")}
                <ul class="meta rules" id="settings-rules">
                    {settings.rules.iter().map(|r| view! { <li>{r.clone()}</li> }).collect_view()}
                </ul>
                <label for="settings-unlabelled">"Transfers to or from an address you have not labelled"</label>
                <select id="settings-unlabelled" name="unlabelled">
                    {options(&settings.unlabelled_choices, &settings.unlabelled)}
                </select>
                {field_error(&error, "unlabelled")}
                <label for="settings-locale">"Numbers"</label>
                <select id="settings-locale" name="locale">
                    {options(&settings.locales, &settings.locale)}
                </select>
                <p class="meta">"Your browser asks for " {settings.browser_locale.clone()} "."</p>
                {field_error(&error, "locale")}
                <button type="submit" class="primary">"Save settings"</button>
            </form>
        }
        .into_any()
    })
}
