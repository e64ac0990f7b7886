// Package containers runs a rank in a container through the Docker Engine
// API (served by Docker and by Podman's compatible service). What each
// container is made of (config.go) is decided by pure functions; docker.go
// only talks to the engine.
package containers
