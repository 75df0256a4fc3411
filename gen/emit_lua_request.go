package gen

import (
	"fmt"
	"strings"
)

// Request ids (docs/semantics.md, "Request ids"): a decision script, and
// the policy script, take an optional request key after their state
// keys, {tag}:rq:<id> in the first key's hash tag. A request charged
// (admitted, or forced, at a cost above 0) keeps its reply there,
// "now_ms:cost:force:limits:" and the reply's integers (limits is 0 for
// a limit's script, the number of limits for a policy's), for REQUEST_MS
// plus TTL_MARGIN_MS; a request of the same id within REQUEST_MS after
// it (and MAX_SKEW_MS before it) gets that reply and decides nothing.

// luaRequestRead reads the request key {key}, if the call gave one,
// after the arguments are checked: its id refused, or the reply of a
// charged request replayed. {costs} is the Lua text of the call's costs
// (a limit's cost in decimal, or a policy's ARGV[2]), {limits} what the
// key keeps as the number of limits, {len} the length of a reply, {peek}
// whether the call charges nothing (a peek is decided, never looked up).
const luaRequestRead = `-- the request key, after the state keys: the retry of a request charged
-- within REQUEST_MS gets the reply it had (docs/semantics.md, "Request ids")
local request__key = {key}
if request__key then
  local tag = string.match(KEYS[1], '^{.*}') -- the first key up to its last '}'
  if string.sub(request__key, 1, #tag + 4) ~= tag .. ':rq:' then
    return redis.error_reply('BADINPUT ' .. ALG .. 'the request key must be ' ..
        (#tag > 32 and string.sub(tag, 1, 32) .. '...' or tag) .. ':rq:<id>, in the hash tag of KEYS[1]')
  end
  local id = string.sub(request__key, #tag + 5)
  if #id < 1 or #id > REQUEST_ID_MAX then
    return redis.error_reply('BADINPUT ' .. ALG .. 'request id must be 1 to ' .. REQUEST_ID_MAX .. ' bytes, got ' .. #id)
  end
  local raw = not ({peek}) and redis.call('GET', request__key)
  if raw then
    local t, was, kept = string.match(raw, '^(%d+):([%d,]+:[01]:%d+):([-%d:]+)$')
    local out = {}
    for v in string.gmatch(kept or '', '[^:]+') do
      out[#out + 1] = #v <= 17 and tonumber(v) or nil
    end
    if not t or #t > 17 or #out ~= {len} then
      return redis.error_reply('BADSTATE ' .. ALG ..
          (#request__key > 32 and string.sub(request__key, 1, 32) .. '...' or request__key) ..
          ': want a request\'s reply, got ' .. (#raw > 32 and string.sub(raw, 1, 32) .. '...' or raw))
    end
    t = t + 0
    if t <= now + MAX_SKEW_MS and now - t <= REQUEST_MS then
      if was ~= {costs} .. ':' .. (force and '1' or '0') .. ':' .. {limits} then
        return redis.error_reply('BADINPUT ' .. ALG .. 'request id ' ..
            (#id > 32 and string.sub(id, 1, 32) .. '...' or id) ..
            ' was charged for another request (cost:force:limits ' .. was .. '); a retry repeats its request')
      end
      return out
    end
  end
end
`

// luaRequestWrite keeps the reply {reply} of a charged request under its
// request key: {charged} says whether it was charged (and {peek} whether
// it charged nothing).
const luaRequestWrite = `if request__key and not ({peek}) and ({charged}) then
  redis.call('SET', request__key, string.format('%d:%s:%s:%d' .. string.rep(':%d', #{reply}), now, {costs}, force and '1' or '0', {limits},
      unpack({reply})), 'PX', REQUEST_MS + TTL_MARGIN_MS)
end
`

// luaRequestReadOf is luaRequestRead for a limit's decision script, of a
// (its request key after its state keys; 0 limits; a reply of n
// integers).
func luaRequestReadOf(w *writer, a *Algorithm, n int) {
	w.text(luaRequestRead, "{key}", fmt.Sprintf("KEYS[%d]", len(a.States)+1), "{limits}", "0", "{len}", fmt.Sprint(n),
		"{costs}", "string.format('%d', cost)", "{peek}", "cost == 0")
}

// luaReplyRemembered ends a limit's decision with the reply vals, kept
// under the request key when the call gave one and was charged: its
// lines.
func luaReplyRemembered(vals []string) []string {
	write := strings.NewReplacer("{reply}", "reply__", "{limits}", "0", "{costs}", "string.format('%d', cost)",
		"{peek}", "cost == 0", "{charged}", "reply__[1] == 1 or force").Replace(luaRequestWrite)
	out := []string{"local reply__ = {" + strings.Join(vals, ", ") + "}"}
	out = append(out, strings.Split(strings.TrimRight(write, "\n"), "\n")...)
	return append(out, "return reply__")
}
