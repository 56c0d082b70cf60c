-- Runs the bcwire Wireshark plugin outside Wireshark, under a plain Lua (5.1 to 5.4),
-- with the Wireshark API it calls replaced by stand-ins: every datagram of a decode
-- file is dissected, and any Lua error or mismatch fails the run.
-- Usage: lua wireshark_stub.lua PLUGIN DECODE_FILE

local plugin, decode = arg[1], arg[2]

local function anything(name)
    return setmetatable({}, {
        __index = function(_, k)
            return anything(name .. "." .. k)
        end,
    })
end

local items = 0
local Tree = {}
Tree.__index = Tree
function Tree.add()
    items = items + 1
    return setmetatable({}, Tree)
end
function Tree.set_text() end
function Tree.set_generated() end
function Tree.set_hidden() end
function Tree.add_tvb_expert_info()
    items = items + 1
end

local function tvb(n)
    return setmetatable({
        len = function() return n end,
        reported_len = function() return n end,
    }, {
        __call = function(_, _, l)
            return { len = function() return l or n end }
        end,
    })
end

ftypes = anything("ftypes")
base = anything("base")
expert = { group = anything("group"), severity = anything("severity") }
ProtoField = { new = function() return {} end }
ProtoExpert = { new = function() return {} end }
Pref = {
    uint = function(_, d) return d end,
    string = function(_, d) return d end,
}
local proto = { prefs = {} }
Proto = { new = function() return proto end }
DissectorTable = {
    get = function()
        return { add = function() end, remove = function() end }
    end,
}
Field = {
    new = function()
        return function()
            return { value = "bcwire decode: " .. decode }
        end
    end,
}
ByteArray = {
    new = function(h)
        return { tvb = function() return tvb(#h / 2) end }
    end,
}
UInt64 = { fromhex = function(h) return tonumber(h, 16) end }
Int64 = { fromhex = function(h) return tonumber(h, 16) end }

dofile(plugin)
proto.init()

local lengths = {}
local frames = 0
for line in io.lines(decode) do
    local f, n = line:match("^P\t(%d+)\t(%d+)\t")
    if f then
        lengths[tonumber(f)] = tonumber(n)
        frames = frames + 1
    end
end
local bad = 0
for frame, n in pairs(lengths) do
    local cols = {}
    proto.dissector(tvb(n), { number = frame, cols = cols }, setmetatable({}, Tree))
    local info = tostring(cols.info)
    if cols.protocol ~= "BC" or info:find("^Bridge Commander %(") then
        bad = bad + 1
        print("frame " .. frame .. ": " .. info)
    end
end
print(_VERSION .. ": " .. frames .. " datagrams, " .. items .. " items, " .. bad .. " not shown")
if bad > 0 or frames == 0 then
    os.exit(1)
end
