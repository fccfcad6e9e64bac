//! Per-request span, log line and latency histogram.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use std::future::{ready, Ready};

/// Wraps every request: `http_requests_total` and `http_request_duration_seconds`
/// by method, matched route and status, and a `request` span.
pub struct RequestMetrics;

impl<S, B> actix_web::dev::Transform<S, ServiceRequest> for RequestMetrics
where
    S: actix_web::dev::Service<
            ServiceRequest,
            Response = ServiceResponse<B>,
            Error = actix_web::Error,
        > + 'static,
    B: MessageBody + 'static,
{
    type Response = ServiceResponse<B>;
    type Error = actix_web::Error;
    type Transform = RequestMetricsService<S>;
    type InitError = ();
    type Future = Ready<Result<Self::Transform, Self::InitError>>;

    fn new_transform(&self, service: S) -> Self::Future {
        ready(Ok(RequestMetricsService {
            service: std::rc::Rc::new(service),
        }))
    }
}

pub struct RequestMetricsService<S> {
    service: std::rc::Rc<S>,
}

impl<S, B> actix_web::dev::Service<ServiceRequest> for RequestMetricsService<S>
where
    S: actix_web::dev::Service<
            ServiceRequest,
            Response = ServiceResponse<B>,
            Error = actix_web::Error,
        > + 'static,
    B: MessageBody + 'static,
{
    type Response = ServiceResponse<B>;
    type Error = actix_web::Error;
    type Future = futures::future::LocalBoxFuture<'static, Result<Self::Response, Self::Error>>;

    actix_web::dev::forward_ready!(service);

    fn call(&self, req: ServiceRequest) -> Self::Future {
        let service = self.service.clone();
        Box::pin(async move {
            use tracing::Instrument;
            let method = req.method().to_string();
            let route = req.match_pattern().unwrap_or_else(|| "unmatched".into());
            let span = tracing::info_span!("request", %method, %route);
            let started = std::time::Instant::now();
            let res = service.call(req).instrument(span.clone()).await?;
            let status = res.status().as_u16().to_string();
            let elapsed = started.elapsed();
            let labels = [("method", method), ("route", route), ("status", status)];
            metrics::counter!("http_requests_total", &labels).increment(1);
            metrics::histogram!("http_request_duration_seconds", &labels)
                .record(elapsed.as_secs_f64());
            span.in_scope(|| {
                tracing::debug!(
                    status = res.status().as_u16(),
                    elapsed_ms = elapsed.as_millis() as u64,
                    "request served"
                )
            });
            Ok(res)
        })
    }
}
