// Package quota is a service's own limits, compiled from quota.yaml by
// limitspec's generator, as a user's module would hold them: DailyQuota,
// a daily quota whose day starts at an offset from midnight UTC (05:00
// UTC, say), and APIPolicy, a burst limit of the catalogue and that
// quota per API key. Its limits go to package goimpl's and package
// redislimit's limiters, to package fallback and package httplimit, as
// the catalogue's do; its scripts are in lua/, its Functions library is
// named quota, and testdata/vectors holds vectors worked by hand that
// its generated test replays.
package quota

//go:generate go run ../../cmd/gen -spec quota.yaml -out . -package quota
