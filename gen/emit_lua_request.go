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
// charged request replayed. {limits} is what the key keeps as the number
// of limits, {len} the length of a reply.
const luaRequestRead = `-- the request key, after the state keys: the retry of a request charged
-- within REQUEST_MS gets the reply it had (docs/semantics.md, "Request ids")
local request__key = {key}
if request__key then
  local tag = string.match(KEYS[1], '^{[^}]*}')
  if string.sub(request__key, 1, #tag + 4) ~= tag .. ':rq:' then
    return redis.error_reply('BADINPUT ' .. ALG .. 'the request key must be ' ..
        (#tag > 32 and string.sub(tag, 1, 32) .. '...' or tag) .. ':rq:<id>, in the hash tag of KEYS[1]')
  end
  local id = string.sub(request__key, #tag + 5)
  if #id < 1 or #id > REQUEST_ID_MAX then
    return redis.error_reply('BADINPUT ' .. ALG .. 'request id must be 1 to ' .. REQUEST_ID_MAX .. ' bytes, got ' .. #id)
  end
  local raw = redis.call('GET', request__key)
  if raw then
    local t, was, kept = string.match(raw, '^(%d+):(%d+:[01]:%d+):([-%d:]+)$')
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
      if was ~= string.format('%d:%s:%d', cost, force and '1' or '0', {limits}) then
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
// request key.
const luaRequestWrite = `if request__key and cost > 0 and ({reply}[1] == 1 or force) then
  redis.call('SET', request__key, string.format('%d:%d:%s:%d' .. string.rep(':%d', #{reply}), now, cost, force and '1' or '0', {limits},
      unpack({reply})), 'PX', REQUEST_MS + TTL_MARGIN_MS)
end
`

// luaRequestReadOf is luaRequestRead for a limit's decision script, of a
// (its request key after its state keys; 0 limits; a reply of n
// integers).
func luaRequestReadOf(w *writer, a *Algorithm, n int) {
	w.text(luaRequestRead, "{key}", fmt.Sprintf("KEYS[%d]", len(a.States)+1), "{limits}", "0", "{len}", fmt.Sprint(n))
}

// luaReplyRemembered ends a limit's decision with the reply vals, kept
// under the request key when the call gave one and was charged: its
// lines.
func luaReplyRemembered(vals []string) []string {
	write := strings.NewReplacer("{reply}", "reply__", "{limits}", "0").Replace(luaRequestWrite)
	out := []string{"local reply__ = {" + strings.Join(vals, ", ") + "}"}
	out = append(out, strings.Split(strings.TrimRight(write, "\n"), "\n")...)
	return append(out, "return reply__")
}
