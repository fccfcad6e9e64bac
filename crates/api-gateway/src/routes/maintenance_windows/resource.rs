//! Maintenance windows as a [`Resource`]: `PUT`, `GET` and `DELETE` by
//! ref, `GET`/`DELETE` by id, the list, and each window of an apply, all
//! through `crate::resource`. A key with a label selector reaches only
//! the windows within its reach ([`visible`]); a ref held by one beyond it
//! is a ref that is not free.

use super::{
    checked_create, insert, remove, shown, stored_definition, visible, CreateWindow, WindowList,
    WindowResponse, AUDIT_KIND,
};
use crate::apply::changes::FieldChange;
use crate::audit;
use crate::auth::AuthUser;
use crate::error::ApiError;
use crate::reach::Named;
use crate::resource::ref_param::WindowRef;
use crate::resource::routes::kind_routes;
use crate::resource::{resource_kind, Listed, Resource};
use crate::state::AppState;
use chrono::Utc;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncPgConnection;
use uptime_db::maintenance::{self as db, MaintenanceWindow, WindowDefinition};

pub struct Windows;

/// The fields an apply's plan compares, as responses show them.
const COMPARED: &[&str] = &[
    "name",
    "monitor_ids",
    "label_selector",
    "effect",
    "starts_at",
    "ends_at",
    "rrule",
    "timezone",
    "duration_secs",
];

impl Resource for Windows {
    resource_kind!(MaintenanceWindow at "/api/v1/maintenance-windows");
    type Create = CreateWindow;
    type Stored = MaintenanceWindow;
    type Checked = WindowDefinition;
    type Shown = WindowResponse;
    type Extra = ();

    fn shown(
        _: &AppState,
        stored: &MaintenanceWindow,
        r#ref: Option<&str>,
    ) -> Result<WindowResponse, ApiError> {
        Ok(shown(stored.clone(), r#ref, Utc::now()))
    }

    async fn get(
        c: &mut AsyncPgConnection,
        user: &AuthUser,
        id: i64,
        lock: bool,
    ) -> Result<MaintenanceWindow, ApiError> {
        visible(c, user, id, lock).await
    }

    /// A body without `starts_at` starts "now" on a create (an ad hoc or a
    /// recurring window's first start); replacing a window with the same
    /// body later must not move it (the same `PUT` or apply twice changes
    /// nothing), so such a body is first tried with the stored start: when
    /// that gives the stored definition, that is it. Otherwise the body is
    /// what a fresh create makes of it.
    async fn check(
        c: &mut AsyncPgConnection,
        _: &AppState,
        user: &AuthUser,
        _: &str,
        body: CreateWindow,
        stored: Option<&MaintenanceWindow>,
        placeholders: bool,
    ) -> Result<WindowDefinition, ApiError> {
        let now = Utc::now();
        if let Some(stored) = stored.filter(|_| body.starts_at.is_none()) {
            let mut from_stored_start = body.clone();
            from_stored_start.starts_at = Some(stored.starts_at);
            if let Ok(same) = checked_create(c, user, from_stored_start, now, placeholders).await {
                if same == stored_definition(stored) {
                    return Ok(same);
                }
            }
        }
        checked_create(c, user, body, now, placeholders).await
    }

    fn compare(
        _: &AppState,
        stored: &MaintenanceWindow,
        definition: &WindowDefinition,
        r#ref: &str,
    ) -> Result<Option<Vec<FieldChange>>, ApiError> {
        if stored_definition(stored) == *definition {
            return Ok(None);
        }
        let now = Utc::now();
        let before = audit::shown(&shown(stored.clone(), Some(r#ref), now));
        let after_row = MaintenanceWindow {
            name: definition.name.clone(),
            monitor_ids: definition.monitor_ids.clone(),
            label_selector: definition.label_selector.clone(),
            effect: definition.effect.clone(),
            starts_at: definition.starts_at,
            ends_at: definition.ends_at,
            rrule: definition.rrule.clone(),
            timezone: definition.timezone.clone(),
            duration_secs: definition.duration_secs,
            last_ends_at: definition.last_ends_at,
            ..stored.clone()
        };
        let after = audit::shown(&shown(after_row, Some(r#ref), now));
        Ok(Some(crate::apply::changes::diff(&before, &after, COMPARED)))
    }

    async fn insert(
        c: &mut AsyncPgConnection,
        _: &AppState,
        user: &AuthUser,
        definition: &WindowDefinition,
        r#ref: &str,
        _: bool,
    ) -> Result<(MaintenanceWindow, ()), ApiError> {
        Ok((
            insert(c, user, definition, Some(r#ref), Utc::now()).await?,
            (),
        ))
    }

    async fn rewrite(
        c: &mut AsyncPgConnection,
        _: &AppState,
        user: &AuthUser,
        stored: &MaintenanceWindow,
        definition: &WindowDefinition,
        r#ref: &str,
        _: bool,
    ) -> Result<(MaintenanceWindow, ()), ApiError> {
        let (id, now) = (stored.id, Utc::now());
        let before = audit::shown(&shown(stored.clone(), Some(r#ref), now));
        let written = audit::update(c, user, AUDIT_KIND, Some(id), &before, move |c| {
            async move {
                let row = db::update(c, user.org_id, id, definition)
                    .await?
                    .ok_or(ApiError::NotFound)?;
                let after = audit::shown(&shown(row.clone(), Some(r#ref), now));
                Ok((row, after))
            }
            .scope_boxed()
        })
        .await?;
        Ok((written.unwrap_or_else(|| stored.clone()), ()))
    }

    async fn remove(
        c: &mut AsyncPgConnection,
        _: &AppState,
        user: &AuthUser,
        stored: &MaintenanceWindow,
        r#ref: Option<&str>,
    ) -> Result<(), ApiError> {
        remove(c, user, stored.clone(), r#ref).await
    }
}

impl Listed for Windows {
    type List = WindowList;

    fn list(maintenance_windows: Vec<WindowResponse>, next_cursor: Option<String>) -> WindowList {
        WindowList {
            maintenance_windows,
            next_cursor,
        }
    }

    async fn page(
        c: &mut AsyncPgConnection,
        user: &AuthUser,
        after_id: i64,
        limit: i64,
    ) -> Result<Vec<MaintenanceWindow>, ApiError> {
        Ok(db::list_page(c, user.org_id, after_id, limit).await?)
    }

    async fn reached(
        c: &mut AsyncPgConnection,
        user: &AuthUser,
        rows: Vec<MaintenanceWindow>,
    ) -> Result<Vec<MaintenanceWindow>, ApiError> {
        let rows = crate::reach::covered(c, user, rows, |w| {
            Named::window(&w.monitor_ids, w.label_selector.as_ref())
        })
        .await?;
        Ok(rows)
    }
}

kind_routes! {
    Windows at "/api/v1/maintenance-windows", tag "maintenance-windows", WindowRef,
    shows WindowResponse, creates CreateWindow;
    id "Maintenance window id";
    no_ref "no window of the organisation has this ref, or it is out of the key's reach (`ref`)";

    /// Read one maintenance window, with its next occurrences.
    get "getMaintenanceWindow" => get;

    /// Delete a maintenance window. An open occurrence ends at the recorder's
    /// next sweep (a monitor still down then alerts); its time stays out of the
    /// uptime already reported.
    delete "deleteMaintenanceWindow" => delete;

    /// Read the organisation's maintenance window with this ref: what
    /// `GET /api/v1/maintenance-windows/{id}` answers for its id.
    get_by_ref "getMaintenanceWindowByRef" => get_window_by_ref;

    /// Delete the organisation's maintenance window with this ref, as
    /// `DELETE /api/v1/maintenance-windows/{id}` does (one audit entry; an open occurrence ends at the recorder's next sweep).
    delete_by_ref "deleteMaintenanceWindowByRef" => delete_window_by_ref;

    /// Create or replace the organisation's maintenance window with this ref.
    ///
    /// The body is a create body (`POST /api/v1/maintenance-windows`), without
    /// `ref` or with the path's, checked as a create is. No window has the
    /// ref: it is created with it (`201`). One has: it is replaced (`200`),
    /// every field not given back at its default, its id kept. When that
    /// changes nothing, nothing is written (the same `ETag` as before); a body
    /// without `starts_at` keeps the stored start when that is all it would
    /// change. `If-Match` is honoured (and fails when there is no window).
    put_by_ref "putMaintenanceWindowByRef" => put_window_by_ref,
        forbidden "the organisation has 200 windows, or a key limited by labels gives a selector outside its own",
        conflict "the ref is not free (`ref`): another request created a window with it meanwhile, or, for a key with a label selector, a window out of its reach has it (the message does not say which)";

    /// List the organisation's maintenance windows in id order, a page at a time.
    list "listMaintenanceWindows" => list, WindowList;
}
