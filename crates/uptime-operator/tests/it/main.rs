//! The operator against the real api-gateway (its own database and NATS
//! server) with an in-memory Kubernetes ([`memory::MemoryCluster`]), and
//! the committed CRDs against the types.

mod binary;
mod crds;
mod kube_cluster;
mod memory;
mod reconcile;
