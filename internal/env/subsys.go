package env

import (
	"strings"
	"sync"
)

// Subsys is a set of NCCL_DEBUG_SUBSYS's subsystems: an INFO line is
// printed only when its subsystems meet the set the variable selects.
type Subsys uint32

// The subsystems, NCCL's names; ringo logs under INIT (communicator
// creation and its connections), BOOTSTRAP, ENV (settings), TUNING
// (protocol choices), NET and COLL.
const (
	SubInit Subsys = 1 << iota
	SubColl
	SubP2P
	SubShm
	SubNet
	SubGraph
	SubTuning
	SubEnv
	SubAlloc
	SubCall
	SubProxy
	SubNVLS
	SubBootstrap
	SubReg
	SubProfile
	SubRAS
	numSubsys = iota
	SubAll    = Subsys(1)<<numSubsys - 1
)

var subsysNames = [numSubsys]string{"INIT", "COLL", "P2P", "SHM", "NET", "GRAPH", "TUNING", "ENV", "ALLOC", "CALL",
	"PROXY", "NVLS", "BOOTSTRAP", "REG", "PROFILE", "RAS"}

// DefaultSubsys is NCCL's default NCCL_DEBUG_SUBSYS: INIT, BOOTSTRAP, ENV.
const DefaultSubsys = SubInit | SubBootstrap | SubEnv

// ParseSubsys reads NCCL_DEBUG_SUBSYS's syntax: a comma list of subsystem
// names (any case; ALL for every one), or, after a leading ^, the ones to
// leave out of all. Empty is the default. Unknown names are ignored, as
// NCCL ignores them, and returned in unknown.
func ParseSubsys(s string) (set Subsys, unknown []string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return DefaultSubsys, nil
	}
	invert := strings.HasPrefix(s, "^")
	for _, name := range strings.Split(strings.TrimPrefix(s, "^"), ",") {
		name = strings.ToUpper(strings.TrimSpace(name))
		switch {
		case name == "":
		case name == "ALL":
			set = SubAll
		default:
			i := 0
			for i < numSubsys && subsysNames[i] != name {
				i++
			}
			if i == numSubsys {
				unknown = append(unknown, name)
				continue
			}
			set |= 1 << i
		}
	}
	if invert {
		set = SubAll &^ set
	}
	return set, unknown
}

var envSubsys = Var{Name: "DEBUG_SUBSYS", NCCL: true}

// ReadDebugSubsys reads NCCL_DEBUG_SUBSYS (or RINGO_DEBUG_SUBSYS) now;
// unknown names are ignored, as NCCL ignores them, with a warning.
func ReadDebugSubsys() Subsys {
	v, name, _ := envSubsys.Lookup()
	set, unknown := ParseSubsys(v)
	if len(unknown) > 0 {
		Fallback(name, v, "the others", "unknown subsystems %v (valid: %s, ALL)", unknown, strings.Join(subsysNames[:], ","))
	}
	return set
}

// debugSubsys is the set NCCL_DEBUG_SUBSYS selects, read once.
var debugSubsys = sync.OnceValue(ReadDebugSubsys)

// DebugSubsys returns the subsystems NCCL_DEBUG_SUBSYS selects.
func DebugSubsys() Subsys { return debugSubsys() }
