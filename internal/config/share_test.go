package config

import (
	"testing"

	"github.com/ringo-ccl/ringo/internal/errs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFitShared: ranks that share a GPU get the channels that fit there
// together; a Config that asks for more, or a GPU too small for one
// channel per rank, is an error naming the GPU and what fits.
func TestFitShared(t *testing.T) {
	t.Setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32") // as the GPU build sets it (package queues)
	for _, tc := range []struct {
		name      string
		channels  int
		given     bool
		gpus      []GPUShare
		want, min int
		err       string
	}{
		{"one rank per GPU", 64, false, []GPUShare{sh("GPU 0", 1, 132), sh("GPU 1", 1, 132)}, 64, 1, ""},
		{"four on one", 64, false, []GPUShare{sh("GPU 0", 4, 132)}, 33, 1, ""},
		{"eight on one", 64, false, []GPUShare{sh("GPU 0", 8, 132)}, 16, 1, ""},
		{"the busiest GPU sets it", 64, false, []GPUShare{sh("GPU 0", 2, 264), sh("GPU 1", 6, 132)}, 22, 1, ""},
		{"given and fitting", 16, true, []GPUShare{sh("GPU 0", 8, 132)}, 16, 16, ""},
		{"given too many", 32, true, []GPUShare{sh("GPU 0", 8, 132)}, 0, 0, "Channels 32: 8 ranks share GPU 0, which holds 132 blocks of ringo's kernels at once, so 16 channels each fit"},
		{"more ranks than blocks", 64, false, []GPUShare{{Name: "GPU 3", Ranks: 200, Local: 1, Resident: 132}}, 0, 0, "200 ranks share GPU 3, which holds 132 blocks of ringo's kernels at once: at most 132 ranks fit there"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Settings{Channels: tc.channels, MinChannels: 1, ChannelsGiven: tc.given}
			if tc.given {
				s.MinChannels = tc.channels
			}
			err := s.FitShared(tc.gpus)
			if tc.err != "" {
				require.ErrorIs(t, err, errs.ErrInvalidArgument)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, s.Channels)
			assert.Equal(t, tc.min, s.MinChannels)
		})
	}
}

// sh is GPU name with ranks ranks, all of this process, holding resident
// blocks.
func sh(name string, ranks, resident int) GPUShare {
	return GPUShare{Name: name, Ranks: ranks, Local: ranks, Resident: resident}
}

// TestFitSharedQueues: ranks of one process sharing a GPU need a hardware
// queue each and one for the device's synchronous copies; fewer is an error naming
// CUDA_DEVICE_MAX_CONNECTIONS and what would do. Ranks of other processes
// have contexts of their own and do not count.
func TestFitSharedQueues(t *testing.T) {
	t.Setenv("CUDA_DEVICE_MAX_CONNECTIONS", "4")
	s := Settings{Channels: 64, MinChannels: 1}
	err := s.FitShared([]GPUShare{sh("GPU 0", 4, 132)})
	require.ErrorIs(t, err, errs.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "CUDA_DEVICE_MAX_CONNECTIONS=4: 4 ranks of this process share GPU 0")
	assert.Contains(t, err.Error(), "set it to at least 5 (at most 32)")
	require.NoError(t, s.FitShared([]GPUShare{{Name: "GPU 0", Ranks: 4, Local: 1, Resident: 132}}))
	require.NoError(t, s.FitShared([]GPUShare{sh("GPU 0", 3, 132)}))
	t.Setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32")
	err = s.FitShared([]GPUShare{sh("GPU 0", 40, 132)})
	require.ErrorIs(t, err, errs.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "40 ranks of this process share GPU 0: at most 31 fit")
}

// TestSubChannelsCapped: a hierarchical variant's group and column
// communicators use at most their parent's channels, which were fitted to
// the ranks sharing a GPU (the groups' kernels run at once, as the
// parent's ranks' do), and a host communicator's net connections may not
// raise them past it (channelsMax).
func TestSubChannelsCapped(t *testing.T) {
	s, err := Resolve(Request{Sub: true, SubChannels: 16}, 2, GPU)
	require.NoError(t, err)
	assert.Equal(t, 16, s.Channels)
	assert.LessOrEqual(t, s.MinChannels, 16)
	assert.Equal(t, 16, s.ChannelsMax)
	s, err = Resolve(Request{Sub: true, SubChannels: 1}, 2, Host)
	require.NoError(t, err)
	assert.Equal(t, 1, s.ChannelsMax)
	s, err = Resolve(Request{Sub: true, SubChannels: 16, Channels: 8}, 2, GPU)
	require.NoError(t, err)
	assert.Equal(t, 8, s.Channels)
}

// TestSharedP2P: ranks of one process on one or two GPUs get the whole
// point-to-point channel budget, unless NCCL_MAX_P2P_NCHANNELS sets it;
// ranks spread over more GPUs keep the default.
func TestSharedP2P(t *testing.T) {
	for _, tc := range []struct {
		name  string
		given bool
		gpus  []GPUShare
		want  int
	}{
		{"two on one", false, []GPUShare{sh("GPU 0", 2, 132)}, 64},
		{"four on one", false, []GPUShare{sh("GPU 0", 4, 132)}, 64},
		{"one per GPU", false, []GPUShare{sh("GPU 0", 1, 132), sh("GPU 1", 1, 132)}, 64},
		{"two on one, one on another", false, []GPUShare{sh("GPU 0", 2, 132), sh("GPU 1", 1, 132)}, 64},
		{"one on each of three", false, []GPUShare{sh("GPU 0", 1, 132), sh("GPU 1", 1, 132), sh("GPU 2", 1, 132)}, DefaultP2PChannels},
		{"a world of one", false, []GPUShare{sh("GPU 0", 1, 132)}, DefaultP2PChannels},
		{"set by the environment", true, []GPUShare{sh("GPU 0", 2, 132)}, DefaultP2PChannels},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Settings{P2PChannels: DefaultP2PChannels, P2PChannelsGiven: tc.given}
			s.SharedP2P(tc.gpus)
			assert.Equal(t, tc.want, s.P2PChannels)
		})
	}
}

// TestRankStripe: ranks of one process all on one GPU take their share of
// RINGO_P2P_STRIPE; on several GPUs, or with direct messages off, none.
func TestRankStripe(t *testing.T) {
	s := Settings{P2PStripe: DefaultP2PStripe}
	assert.Equal(t, int64(DefaultP2PStripe/2), s.RankStripe([]GPUShare{sh("GPU 0", 2, 132)}))
	assert.Equal(t, int64(DefaultP2PStripe/4), s.RankStripe([]GPUShare{sh("GPU 0", 4, 132)}))
	assert.Zero(t, s.RankStripe([]GPUShare{sh("GPU 0", 1, 132), sh("GPU 1", 1, 132)}), "two GPUs")
	s.DirectOff = true
	assert.Zero(t, s.RankStripe([]GPUShare{sh("GPU 0", 2, 132)}), "NCCL_P2P_DIRECT_DISABLE=1")
}
