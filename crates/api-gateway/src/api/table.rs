//! The one declaration of a route: its handler's `#[utoipa::path]` says
//! the method(s), the path and the words of the document, and one line of
//! [`routes!`] says the access it needs. From that line come the actix
//! resource serving it, its rows of the scope table (`crate::authz::ROUTES`)
//! and its operation in the OpenAPI document, so none of the three can
//! name a route the others miss.
//!
//! A module declares its routes as `pub fn routes() -> Routes { routes![
//! list: READ, create: WRITE "a note", ... ] }`, in the order actix must try
//! them (a longer or literal path before the `{id}` that would take it);
//! `crate::routes::all` walks the modules.

use crate::api::scopes::{Access, RouteAccess};
use actix_web::http::Method;
use actix_web::web;
use utoipa::openapi::path::HttpMethod;
use utoipa::openapi::OpenApi;

/// The scope every route is mounted under (`crate::api::configure`); the
/// document's paths and the scope table's carry it, actix's do not.
pub const PREFIX: &str = "/api/v1";

/// One handler: what its `#[utoipa::path]` declares, the access it needs,
/// and how it is served.
/// How a handler is served for one method.
type Serve = fn(Method) -> actix_web::Route;
/// What a path's resource needs beyond its routes (a body limit of its own).
type Shape = fn(actix_web::Resource) -> actix_web::Resource;

pub struct Handler {
    path: fn() -> String,
    methods: fn() -> Vec<HttpMethod>,
    document: fn(&mut OpenApi),
    route: Serve,
    access: Access,
    note: &'static str,
    shape: Option<Shape>,
}

impl Handler {
    /// The handler whose `#[utoipa::path]` made `P`, served by `route`
    /// (`|method| web::method(method).to(handler)`, which [`routes!`]
    /// writes).
    pub fn new<P>(route: Serve, access: Access, note: &'static str) -> Self
    where
        P: utoipa::Path + utoipa::__dev::SchemaReferences + for<'t> utoipa::__dev::Tags<'t>,
    {
        Handler {
            path: P::path,
            methods: P::methods,
            document: document::<P>,
            route,
            access,
            note,
            shape: None,
        }
    }
}

/// Adds `P`'s operation and the schemas it names to `api`, as
/// `#[derive(OpenApi)]`'s `paths(...)` does (utoipa's `__dev` traits are
/// what that derive itself calls).
fn document<P>(api: &mut OpenApi)
where
    P: utoipa::Path + utoipa::__dev::SchemaReferences + for<'t> utoipa::__dev::Tags<'t>,
{
    let mut operation = P::operation();
    let tags = <P as utoipa::__dev::Tags>::tags();
    if !tags.is_empty() {
        operation
            .tags
            .get_or_insert_with(Vec::new)
            .extend(tags.iter().map(ToString::to_string));
    }
    api.paths
        .add_path_operation(P::path(), P::methods(), operation);
    let mut schemas = Vec::new();
    P::schemas(&mut schemas);
    api.components
        .get_or_insert_with(Default::default)
        .schemas
        .extend(schemas);
}

/// Routes in the order actix tries them.
#[derive(Default)]
pub struct Routes(Vec<Handler>);

impl Routes {
    pub fn handler(mut self, handler: Handler) -> Self {
        self.0.push(handler);
        self
    }

    /// The resource of the last handler added shaped by `shape`:
    /// `routes![bulk_create: WRITE].shaped(|r| r.app_data(limit()))`.
    pub fn shaped(mut self, shape: Shape) -> Self {
        if let Some(handler) = self.0.last_mut() {
            handler.shape = Some(shape);
        }
        self
    }

    /// `more` after these.
    pub fn then(mut self, more: Routes) -> Self {
        self.0.extend(more.0);
        self
    }

    fn handlers(&self) -> impl Iterator<Item = &Handler> {
        self.0.iter()
    }

    /// The scope table's rows: one per method of each handler.
    pub fn accesses(&self) -> Vec<RouteAccess> {
        let mut rows = Vec::new();
        for handler in self.handlers() {
            // Built once per process (`crate::authz::ROUTES`), and the
            // table's rows name their path for the process's life.
            let path: &'static str = Box::leak((handler.path)().into_boxed_str());
            for method in (handler.methods)() {
                rows.push(RouteAccess {
                    method: method_name(&method),
                    path,
                    access: handler.access,
                    note: handler.note,
                });
            }
        }
        rows
    }

    /// Adds every handler's operation to `api`.
    pub fn document(&self, api: &mut OpenApi) {
        for handler in self.handlers() {
            (handler.document)(api);
        }
    }

    /// Registers the routes relative to [`PREFIX`]: one resource per path
    /// (where the path first appears), so a method it does not serve is a
    /// `405` with `Allow` rather than a try of the next resource.
    pub fn configure(&self, cfg: &mut web::ServiceConfig) {
        // (path, its methods, its shapes), in the order paths first appear.
        type Slot = (String, Vec<(Method, Serve)>, Vec<Shape>);
        let mut slots: Vec<Slot> = Vec::new();
        for handler in &self.0 {
            let full = (handler.path)();
            let path = full.strip_prefix(PREFIX).unwrap_or(&full).to_string();
            let methods = (handler.methods)()
                .into_iter()
                .map(|m| (actix_method(&m), handler.route));
            let shapes = handler.shape.into_iter();
            match slots.iter_mut().find(|(p, _, _)| *p == path) {
                Some((_, routes, shaped)) => {
                    routes.extend(methods);
                    shaped.extend(shapes);
                }
                None => slots.push((path, methods.collect(), shapes.collect())),
            }
        }
        for (path, routes, shapes) in slots {
            let resource = shapes
                .into_iter()
                .fold(web::resource(path), |r, shape| shape(r));
            let resource = routes
                .into_iter()
                .fold(resource, |resource, (method, route)| {
                    resource.route(route(method))
                });
            cfg.service(resource);
        }
    }
}

fn method_name(method: &HttpMethod) -> &'static str {
    match method {
        HttpMethod::Get => "GET",
        HttpMethod::Put => "PUT",
        HttpMethod::Post => "POST",
        HttpMethod::Delete => "DELETE",
        HttpMethod::Options => "OPTIONS",
        HttpMethod::Head => "HEAD",
        HttpMethod::Patch => "PATCH",
        HttpMethod::Trace => "TRACE",
    }
}

fn actix_method(method: &HttpMethod) -> Method {
    match method {
        HttpMethod::Get => Method::GET,
        HttpMethod::Put => Method::PUT,
        HttpMethod::Post => Method::POST,
        HttpMethod::Delete => Method::DELETE,
        HttpMethod::Options => Method::OPTIONS,
        HttpMethod::Head => Method::HEAD,
        HttpMethod::Patch => Method::PATCH,
        HttpMethod::Trace => Method::TRACE,
    }
}

/// `routes![handler: ACCESS, other: ACCESS "note", ...]`: the [`Routes`]
/// of these handlers (each with a `#[utoipa::path]` in scope), `ACCESS`
/// one of `crate::api::scopes`' `PUBLIC`, `READ`, `WRITE`, `ADMIN`, `OWNER`.
macro_rules! routes {
    ($($handler:ident : $access:ident $($note:literal)?),* $(,)?) => {
        $crate::api::table::Routes::default()
            $(.handler(::pastey::paste! {
                $crate::api::table::Handler::new::<[<__path_ $handler>]>(
                    |method| ::actix_web::web::method(method).to($handler),
                    $crate::api::scopes::$access,
                    $crate::api::table::note!($($note)?),
                )
            }))*
    };
}
pub(crate) use routes;

/// A handler's note, `""` when it has none.
macro_rules! note {
    () => {
        ""
    };
    ($note:literal) => {
        $note
    };
}
pub(crate) use note;
