package tier

import (
	"github.com/redis/rueidis"

	"github.com/twochoice/twochoice/store/tier/internal/near"
)

// pxat sets the expiry of the replies the near-cache hands out (see
// near.PXATWriter).
var pxat near.PXATWriter[rueidis.RedisMessage, *rueidis.RedisMessage]
