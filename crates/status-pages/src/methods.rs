//! Methods as RFC 9110 has them, for every route alike: `HEAD` wherever
//! `GET` is served (9.3.2: the GET's status and headers, no body), and a
//! method a route does not serve is `405` with `Allow` naming those it does
//! (15.5.6). Routes are declared through [`Routes`], so none can forget.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::{header, Method};
use actix_web::middleware::Next;
use actix_web::{web, FromRequest, Handler, HttpResponse, Resource, Responder};

/// Routes `HEAD` as `GET`. The protocol layer (actix-http) noted the
/// method before routing and sends a HEAD's answer without its body, so
/// the headers are the GET's (`Content-Length` included).
pub async fn head_as_get(
    mut req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    if req.method() == Method::HEAD {
        req.head_mut().method = Method::GET;
    }
    next.call(req).await
}

/// One path's methods, and the `405` for the others.
pub struct Routes {
    resource: Resource,
    allow: Vec<&'static str>,
}

impl Routes {
    /// The methods of `resource` (a `web::resource(path)`, with its app data).
    pub fn on(resource: Resource) -> Self {
        Self {
            resource,
            allow: Vec::new(),
        }
    }

    /// `GET`, and so `HEAD` ([`head_as_get`]).
    pub fn get<F, Args>(mut self, handler: F) -> Self
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.resource = self.resource.route(web::get().to(handler));
        self.allow.extend(["GET", "HEAD"]);
        self
    }

    pub fn post<F, Args>(mut self, handler: F) -> Self
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.resource = self.resource.route(web::post().to(handler));
        self.allow.push("POST");
        self
    }

    /// The resource, answering any other method `405` with `Allow`.
    pub fn done(self) -> Resource {
        let allow = self.allow.join(", ");
        self.resource.default_service(web::to(move || {
            let allow = allow.clone();
            async move {
                HttpResponse::MethodNotAllowed()
                    .insert_header((header::ALLOW, allow))
                    .content_type("text/plain; charset=utf-8")
                    .body("Method not allowed.\n")
            }
        }))
    }
}
