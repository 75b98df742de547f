"""Front-ends that carry API requests to a service: each a thin layer over `api.methods`."""
