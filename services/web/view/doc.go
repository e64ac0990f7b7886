// Package view builds what the dashboard's pages show from what the web
// service follows (nodes, claims, job records, events): pure functions
// from values to view models, with no clock of their own and no I/O, so
// that a table test pins each page's content and a benchmark measures
// them without a cluster. The handlers render the models with
// html/template.
package view
