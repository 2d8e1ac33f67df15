module github.com/cloudwego/netpoll

go 1.15

require (
	github.com/bytedance/gopkg v0.1.1
	github.com/cloudwego/gopkg v0.1.4
	golang.org/x/sys v0.19.0
)
