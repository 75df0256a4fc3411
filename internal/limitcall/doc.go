// Package limitcall is what the two limiters, package goimpl's and
// package redislimit's, share about a call: the refusals of a request's
// rule (a limit or a policy, and of the handles bound to one), the hash
// tags of a policy's limits and the call of the script that decides it,
// the refusals of a key in the scripts' words, a request key's name, and
// the Result a decision's replies (kit.Reply) make. Both limiters answer
// alike because they answer through it.
package limitcall
