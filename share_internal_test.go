package ringo

import (
	"testing"

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
		gpus      []gpuShare
		want, min int
		err       string
	}{
		{"one rank per GPU", 64, false, []gpuShare{sh("GPU 0", 1, 132), sh("GPU 1", 1, 132)}, 64, 1, ""},
		{"four on one", 64, false, []gpuShare{sh("GPU 0", 4, 132)}, 33, 1, ""},
		{"eight on one", 64, false, []gpuShare{sh("GPU 0", 8, 132)}, 16, 1, ""},
		{"the busiest GPU sets it", 64, false, []gpuShare{sh("GPU 0", 2, 264), sh("GPU 1", 6, 132)}, 22, 1, ""},
		{"given and fitting", 16, true, []gpuShare{sh("GPU 0", 8, 132)}, 16, 16, ""},
		{"given too many", 32, true, []gpuShare{sh("GPU 0", 8, 132)}, 0, 0, "Channels 32: 8 ranks share GPU 0, which holds 132 blocks of ringo's kernels at once, so 16 channels each fit"},
		{"more ranks than blocks", 64, false, []gpuShare{{name: "GPU 3", ranks: 200, local: 1, resident: 132}}, 0, 0, "200 ranks share GPU 3, which holds 132 blocks of ringo's kernels at once: at most 132 ranks fit there"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := settings{channels: tc.channels, minChannels: 1, channelsGiven: tc.given}
			if tc.given {
				s.minChannels = tc.channels
			}
			err := s.fitShared(tc.gpus)
			if tc.err != "" {
				require.ErrorIs(t, err, ErrInvalidArgument)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, s.channels)
			assert.Equal(t, tc.min, s.minChannels)
		})
	}
}

// sh is GPU name with ranks ranks, all of this process, holding resident
// blocks.
func sh(name string, ranks, resident int) gpuShare {
	return gpuShare{name: name, ranks: ranks, local: ranks, resident: resident}
}

// TestFitSharedQueues: ranks of one process sharing a GPU need a hardware
// queue each and one for the legacy stream; fewer is an error naming
// CUDA_DEVICE_MAX_CONNECTIONS and what would do. Ranks of other processes
// have contexts of their own and do not count.
func TestFitSharedQueues(t *testing.T) {
	t.Setenv("CUDA_DEVICE_MAX_CONNECTIONS", "4")
	s := settings{channels: 64, minChannels: 1}
	err := s.fitShared([]gpuShare{sh("GPU 0", 4, 132)})
	require.ErrorIs(t, err, ErrInvalidArgument)
	assert.Contains(t, err.Error(), "CUDA_DEVICE_MAX_CONNECTIONS=4: 4 ranks of this process share GPU 0")
	assert.Contains(t, err.Error(), "set it to at least 5 (at most 32)")
	require.NoError(t, s.fitShared([]gpuShare{{name: "GPU 0", ranks: 4, local: 1, resident: 132}}))
	require.NoError(t, s.fitShared([]gpuShare{sh("GPU 0", 3, 132)}))
	t.Setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32")
	err = s.fitShared([]gpuShare{sh("GPU 0", 40, 132)})
	require.ErrorIs(t, err, ErrInvalidArgument)
	assert.Contains(t, err.Error(), "40 ranks of this process share GPU 0: at most 31 fit")
}

// TestSubChannelsCapped: a hierarchical variant's group and column
// communicators use at most their parent's channels, which were fitted to
// the ranks sharing a GPU (the groups' kernels run at once, as the
// parent's ranks' do), and a host communicator's net connections may not
// raise them past it (channelsMax).
func TestSubChannelsCapped(t *testing.T) {
	s, err := resolve(&Config{sub: true, subChannels: 16}, 2, gpuDefaults)
	require.NoError(t, err)
	assert.Equal(t, 16, s.channels)
	assert.LessOrEqual(t, s.minChannels, 16)
	assert.Equal(t, 16, s.channelsMax)
	s, err = resolve(&Config{sub: true, subChannels: 1}, 2, hostDefaults)
	require.NoError(t, err)
	assert.Equal(t, 1, s.channelsMax)
	s, err = resolve(&Config{sub: true, subChannels: 16, Channels: 8}, 2, gpuDefaults)
	require.NoError(t, err)
	assert.Equal(t, 8, s.channels)
}
