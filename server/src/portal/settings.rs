//! The account settings page (`GET /settings`, `POST /settings`) and the
//! choices it shares with the report view: the jurisdictions, the methods
//! each accepts (and why it refuses the others, in the core's words), the
//! reporting currencies, the locales.
//!
//! The POST is a thin adapter: after the CSRF check ([`CheckedForm`]) it
//! hands the form, parsed into the same `SetTaxDefaultsArgs`, to
//! `accounts::api::save_tax_defaults`, the function `POST /v1/settings/tax`
//! calls, so the page and the REST route cannot drift. Saved: a 303 back
//! here with "Saved" in the session's flash (post/redirect/get). Refused:
//! this page again, 400, with the reason beside its field.
//!
//! The locale a page writes numbers in ([`locale_for`]): the account's
//! setting, else the request's `Accept-Language` negotiated against the
//! supported set (`values::format::Locale::negotiate`).

use axum::{
    extract::State,
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
};
use serde::Deserialize;
use tower_sessions::Session;

use crate::http::browser_locale;

use super::{
    Parts,
    form::{CheckedForm, PortalForm},
    pages::{account_page, done},
    render,
    sessions::{Flashed, take_flash},
};
use crate::{
    accounts::{
        AccountId,
        api::{SetTaxDefaultsArgs, save_tax_defaults},
        tax_settings::{self, TaxSettings, unlabelled_name},
    },
    basis::{Method, books::UnlabelledTransfers, jurisdiction::Jurisdiction},
    error::AppError,
    state::AppState,
    values::{format::Locale, fx::Currency},
};
use app::{
    frame::{Portal, PortalPage, Viewer},
    views::{Choice, FieldError, SettingsView},
};

const PAGE: &str = "/settings";

fn choice(value: &str, label: impl Into<String>) -> Choice {
    Choice {
        value: value.to_owned(),
        label: label.into(),
    }
}

/// A jurisdiction as people name it.
pub(super) fn jurisdiction_name(j: Jurisdiction) -> &'static str {
    match j {
        Jurisdiction::Us => "United States",
        Jurisdiction::Uk => "United Kingdom",
        Jurisdiction::Ca => "Canada",
        Jurisdiction::De => "Germany",
        Jurisdiction::Au => "Australia",
    }
}

pub(super) fn jurisdictions() -> Vec<Choice> {
    Jurisdiction::ALL
        .into_iter()
        .map(|j| {
            choice(
                j.as_str(),
                format!("{} ({})", jurisdiction_name(j), j.currency().code()),
            )
        })
        .collect()
}

/// A method as people name it.
pub(super) fn method_name(m: Method) -> &'static str {
    match m {
        Method::Fifo => "FIFO (first in, first out)",
        Method::Lifo => "LIFO (last in, first out)",
        Method::Hifo => "HIFO (highest cost first out)",
        Method::Lofo => "LOFO (lowest cost first out)",
        Method::Average => "Average cost",
    }
}

/// How `j` matches when no method is chosen, in words.
pub(super) fn own_matching(j: Jurisdiction) -> &'static str {
    match j {
        Jurisdiction::Us | Jurisdiction::De | Jurisdiction::Au => "FIFO",
        Jurisdiction::Uk => "share matching: same day, 30 days, Section 104 pool",
        Jurisdiction::Ca => "the adjusted cost base (average cost)",
    }
}

/// The methods `j` accepts among those the service offers, after "its own".
pub(super) fn methods(j: Jurisdiction) -> Vec<Choice> {
    let mut out = vec![choice(
        "",
        format!("{}'s own: {}", jurisdiction_name(j), own_matching(j)),
    )];
    out.extend(
        Method::SERVED
            .into_iter()
            .filter(|m| j.matching(Some(*m)).is_ok())
            .map(|m| choice(m.as_str(), method_name(m))),
    );
    out
}

pub(super) fn currencies(j: Jurisdiction) -> Vec<Choice> {
    let mut out = vec![choice(
        "",
        format!("{}'s own: {}", jurisdiction_name(j), j.currency().code()),
    )];
    // Germany's exemption limit is in euros (EStG §23 Abs. 3 S. 5), so it
    // is assessed in EUR only (`analytics::tax::TaxChoice::from_args`).
    if j != Jurisdiction::De {
        out.extend(
            Currency::ALL
                .into_iter()
                .map(|c| choice(c.code(), c.code())),
        );
    }
    out
}

/// What `j` accepts and refuses, in the core's words (its sources named).
pub(super) fn rules(j: Jurisdiction) -> Vec<String> {
    let mut out = Vec::new();
    let accepted: Vec<&str> = Method::SERVED
        .into_iter()
        .filter(|m| j.matching(Some(*m)).is_ok())
        .map(Method::as_str)
        .collect();
    out.push(format!(
        "{}: {} by default{}.",
        jurisdiction_name(j),
        own_matching(j),
        if accepted.is_empty() {
            ", and no other method".to_owned()
        } else {
            format!("; accepted: {}", accepted.join(", "))
        }
    ));
    let mut seen = Vec::new();
    for m in Method::SERVED {
        if let Err(refused) = j.matching(Some(m))
            && !seen.contains(&refused.reason)
        {
            seen.push(refused.reason);
            let refused_here: Vec<&str> = Method::SERVED
                .into_iter()
                .filter(|x| {
                    j.matching(Some(*x))
                        .err()
                        .is_some_and(|r| r.reason == refused.reason)
                })
                .map(Method::as_str)
                .collect();
            out.push(format!(
                "Not {}: {}.",
                refused_here.join(", "),
                refused.reason
            ));
        }
    }
    if j == Jurisdiction::De {
        out.push(
            "Germany is assessed in EUR only: the exemption limit of EStG §23 Abs. 3 S. 5 \
             (1,000 EUR from 2024) is in euros."
                .to_owned(),
        );
    }
    out
}

fn unlabelled_choices() -> Vec<Choice> {
    vec![
        choice(
            unlabelled_name(UnlabelledTransfers::AtMarketValue),
            "At market value: sold or bought (the default)",
        ),
        choice(
            unlabelled_name(UnlabelledTransfers::OutOfBooks),
            "Out of the books at cost (as to an exchange)",
        ),
    ]
}

fn locales() -> Vec<Choice> {
    let mut out = vec![choice("", "As my browser asks")];
    out.extend(Locale::ALL.into_iter().map(|l| choice(l.tag(), l.name())));
    out
}

/// The locale numbers are written in for this request: the account's
/// setting, else `Accept-Language`, else en-US.
pub async fn locale_for(
    state: &AppState,
    account: Option<&AccountId>,
    headers: &HeaderMap,
) -> Result<Locale, AppError> {
    if let Some(account) = account
        && let Some(locale) = tax_settings::locale_of(state.store(), account).await?
    {
        return Ok(locale);
    }
    Ok(browser_locale(headers))
}

/// The form as sent: every field text, parsed by the REST args' own rules.
#[derive(Debug, Default, Deserialize)]
pub struct SettingsForm {
    #[serde(default)]
    jurisdiction: String,
    #[serde(default)]
    method: String,
    #[serde(default)]
    currency: String,
    #[serde(default)]
    unlabelled: String,
    #[serde(default)]
    locale: String,
    #[serde(default, rename = "csrf")]
    _csrf: String,
}

impl PortalForm for SettingsForm {
    const PAGE: &'static str = PAGE;
}

fn view_of(settings: Option<TaxSettings>, headers: &HeaderMap) -> SettingsView {
    let jurisdiction = settings.map(|s| s.jurisdiction).unwrap_or_default();
    SettingsView {
        jurisdiction: jurisdiction.as_str().to_owned(),
        method: settings
            .and_then(|s| s.method)
            .map(|m| m.as_str().to_owned())
            .unwrap_or_default(),
        currency: settings
            .and_then(|s| s.currency)
            .map(|c| c.code().to_owned())
            .unwrap_or_default(),
        unlabelled: unlabelled_name(settings.and_then(|s| s.unlabelled).unwrap_or_default())
            .to_owned(),
        locale: settings
            .and_then(|s| s.locale)
            .map(|l| l.tag().to_owned())
            .unwrap_or_default(),
        saved: settings.is_some(),
        ..choices(jurisdiction, headers)
    }
}

/// The options of the page for `jurisdiction`.
fn choices(jurisdiction: Jurisdiction, headers: &HeaderMap) -> SettingsView {
    // The method and currency lists are those of the jurisdiction saved;
    // every jurisdiction's rules are listed, so a person choosing another
    // reads what it accepts before saving (a refusal says it again).
    let mut methods = methods(jurisdiction);
    for m in Method::SERVED {
        if !methods.iter().any(|c| c.value == m.as_str()) {
            methods.push(choice(
                m.as_str(),
                format!(
                    "{} (not in {})",
                    method_name(m),
                    jurisdiction_name(jurisdiction)
                ),
            ));
        }
    }
    let mut currencies = vec![choice("", "The jurisdiction's own")];
    currencies.extend(
        Currency::ALL
            .into_iter()
            .map(|c| choice(c.code(), c.code())),
    );
    SettingsView {
        jurisdictions: jurisdictions(),
        methods,
        currencies,
        unlabelled_choices: unlabelled_choices(),
        locales: locales(),
        rules: Jurisdiction::ALL.into_iter().flat_map(rules).collect(),
        browser_locale: browser_locale(headers).name().to_owned(),
        ..SettingsView::default()
    }
}

async fn respond(
    state: &AppState,
    viewer: Viewer,
    status: StatusCode,
    view: SettingsView,
) -> Response {
    let portal = Portal {
        viewer,
        page: PortalPage::Settings(Box::new(view)),
    };
    render(state, PAGE, status, portal).await
}

/// `GET /settings`.
pub async fn page(
    State(state): State<AppState>,
    axum::Extension(parts): axum::Extension<Parts>,
    session: Session,
    headers: HeaderMap,
    axum::extract::OriginalUri(uri): axum::extract::OriginalUri,
) -> Response {
    let (viewer, account) = match account_page(&state, &parts, &session, &uri).await {
        Ok(page) => page,
        Err(response) => return response,
    };
    let settings = match tax_settings::of(state.store(), &account).await {
        Ok(s) => s,
        Err(err) => return AppError::from(err).into_response(),
    };
    let mut view = view_of(settings, &headers);
    match take_flash(&session, &account, state.now_ms(), PAGE).await {
        Ok(Some(Flashed::Notice(notice))) => view.notice = Some(notice),
        Ok(_) => {}
        Err(err) => return err.into_response(),
    }
    respond(&state, viewer, StatusCode::OK, view).await
}

/// The form as the REST body would carry it (empty fields absent), read by
/// the same deserializers, or the field it fails on and why.
fn args_of(form: &SettingsForm) -> Result<SetTaxDefaultsArgs, FieldError> {
    let mut body = serde_json::Map::new();
    for (name, value) in [
        ("jurisdiction", &form.jurisdiction),
        ("method", &form.method),
        ("currency", &form.currency),
        ("unlabelled", &form.unlabelled),
        ("locale", &form.locale),
    ] {
        let value = value.trim();
        if !value.is_empty() {
            body.insert(name.to_owned(), serde_json::Value::String(value.to_owned()));
        }
    }
    if !body.contains_key("jurisdiction") {
        return Err(FieldError {
            field: "jurisdiction".to_owned(),
            message: "Choose a jurisdiction: us, uk, ca, de or au.".to_owned(),
        });
    }
    serde_json::from_value(serde_json::Value::Object(body.clone())).map_err(|e| {
        // Which field: the first whose value alone fails.
        let text = e.to_string();
        let field = ["jurisdiction", "method", "currency", "unlabelled", "locale"]
            .into_iter()
            .find(|f| {
                body.get(*f).is_some_and(|v| {
                    let mut one = serde_json::Map::new();
                    one.insert("jurisdiction".to_owned(), "us".into());
                    one.insert((*f).to_owned(), v.clone());
                    serde_json::from_value::<SetTaxDefaultsArgs>(serde_json::Value::Object(one))
                        .is_err()
                })
            })
            .unwrap_or("jurisdiction");
        FieldError {
            field: field.to_owned(),
            message: format!(
                "{field}: {}",
                text.split(" at line").next().unwrap_or(&text)
            ),
        }
    })
}

/// The field an error of `save_tax_defaults` is about (its message starts
/// with the argument's name).
fn field_of(message: &str) -> &'static str {
    ["method", "currency", "unlabelled", "locale"]
        .into_iter()
        .find(|f| message.starts_with(&format!("{f}:")))
        .unwrap_or("jurisdiction")
}

/// `POST /settings`: save the defaults, then back to the page.
pub async fn save(
    State(state): State<AppState>,
    headers: HeaderMap,
    CheckedForm {
        viewer,
        account,
        form,
        session,
    }: CheckedForm<SettingsForm>,
) -> Response {
    let refused = |error: FieldError| {
        let jurisdiction = Jurisdiction::parse(form.jurisdiction.trim()).unwrap_or_default();
        SettingsView {
            jurisdiction: form.jurisdiction.trim().to_owned(),
            method: form.method.trim().to_owned(),
            currency: form.currency.trim().to_owned(),
            unlabelled: form.unlabelled.trim().to_owned(),
            locale: form.locale.trim().to_owned(),
            saved: true,
            error: Some(error),
            ..choices(jurisdiction, &headers)
        }
    };
    let args = match args_of(&form) {
        Ok(args) => args,
        Err(error) => {
            return respond(&state, viewer, StatusCode::BAD_REQUEST, refused(error)).await;
        }
    };
    match save_tax_defaults(state.store(), state.now_ms(), &account, args).await {
        Ok(saved) => {
            let notice = format!(
                "Saved: {} rules{}, in {}; numbers {}.",
                saved
                    .jurisdiction
                    .as_deref()
                    .and_then(Jurisdiction::parse)
                    .map(jurisdiction_name)
                    .unwrap_or("no"),
                saved
                    .method
                    .as_deref()
                    .and_then(Method::parse)
                    .map(|m| format!(" with {}", method_name(m)))
                    .unwrap_or_default(),
                saved.currency.as_deref().unwrap_or("USD"),
                saved
                    .locale
                    .as_deref()
                    .and_then(Locale::parse)
                    .map(|l| format!("as {}", l.tag()))
                    .unwrap_or_else(|| "as your browser asks".to_owned()),
            );
            done(&state, &session, &account, PAGE, Flashed::Notice(notice)).await
        }
        Err(err) if err.code() == crate::error::Code::InvalidParams => {
            let message = err.message().to_owned();
            let error = FieldError {
                field: field_of(&message).to_owned(),
                message,
            };
            respond(&state, viewer, StatusCode::BAD_REQUEST, refused(error)).await
        }
        Err(err) => err.into_response(),
    }
}
