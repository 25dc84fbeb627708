"""Sample pages for the search tests: three sites of Simplified Chinese pages about
Debian, programming and a blog, and one in Traditional script with Taiwan wording."""

from __future__ import annotations

from services.common.domain.messages import PageEvent
from tests.page_events import page_event

SITES = (
    "https://wiki.example.cn", "https://docs.example.org.cn", "https://blog.example.com.cn", "https://tw.example.com.tw",
)  # fmt: skip
# (index into SITES, path, title, headings, body)
PAGES = [
    (0, "/install", "Debian 安装指南", ["准备安装介质", "分区"], "本文介绍如何从 U 盘安装 Debian 系统。首先下载安装镜像，然后写入 U 盘，重启电脑并从 U 盘启动。安装程序会引导你完成分区和软件选择。"),
    (0, "/apt", "使用 apt-get 管理软件包", ["安装软件包", "删除软件包"], "apt-get 是 Debian 的软件包管理工具。使用 apt-get install 安装软件，使用 apt-get remove 删除软件。更新软件包列表请运行 apt-get update。"),
    (0, "/network", "网络配置", ["有线网络", "无线网络"], "在 Debian 中，网络配置文件位于 /etc/network/interfaces。你可以为有线网卡配置静态地址，也可以使用 DHCP 自动获取地址。无线网络需要安装固件。"),
    (0, "/kernel", "Linux 内核模块", ["加载模块", "黑名单"], "内核模块可以在系统运行时加载和卸载。使用 modprobe 命令加载内核模块，使用 lsmod 查看已加载的模块。把模块加入黑名单可以阻止它自动加载。"),
    (0, "/printing", "打印机设置", ["安装驱动"], "Debian 使用 CUPS 管理打印机。安装 cups 软件包后，可以在浏览器中打开管理页面添加打印机。部分打印机需要额外的驱动程序。"),
    (0, "/security", "安全更新", ["自动更新"], "Debian 安全团队为稳定版发布安全更新。建议启用 unattended-upgrades 软件包，自动安装安全更新，保护系统免受已知漏洞的攻击。"),
    (0, "/ssh", "SSH 远程登录", ["密钥登录", "禁止密码登录"], "SSH 是远程登录服务器的标准方式。生成密钥对后，把公钥复制到服务器，就可以免密码登录。为了安全，可以在配置文件中禁止密码登录。"),
    (0, "/firewall", "防火墙配置", ["nftables"], "Debian 默认使用 nftables 作为防火墙。你可以编写规则允许 SSH 和网页服务的端口，拒绝其他入站连接。防火墙规则保存在 /etc/nftables.conf 中。"),
    (0, "/input", "中文输入法", ["fcitx5"], "在桌面环境中使用中文输入法，推荐安装 fcitx5 和拼音输入法。安装后需要注销并重新登录，然后在设置中添加拼音输入法。"),
    (0, "/boot", "系统启动过程", ["GRUB", "systemd"], "电脑开机后，固件加载 GRUB 引导程序，GRUB 加载 Linux 内核，内核启动 systemd。systemd 按照依赖关系启动各项系统服务。"),
    (0, "/locale", "区域和语言设置", ["字符编码"], "系统的区域设置决定了日期格式和字符编码。中文用户通常选择 zh_CN.UTF-8。运行 dpkg-reconfigure locales 可以修改区域设置。"),
    (0, "/backup", "备份数据", ["rsync"], "定期备份是保护数据的最好方法。rsync 可以把文件同步到另一块硬盘或远程服务器，只传输变化的部分，速度很快。"),
    (0, "/users", "用户和权限", ["sudo"], "Linux 是多用户系统。每个文件都有所有者和权限。普通用户可以通过 sudo 临时获得管理员权限，执行系统管理任务。"),
    (0, "/disk", "磁盘分区", ["分区表", "文件系统"], "安装系统前需要对磁盘分区。常见的分区表格式有 MBR 和 GPT。每个分区可以格式化为 ext4 等文件系统。"),
    (1, "/python/intro", "Python 编程入门", ["变量", "函数"], "Python 是一种简单易学的编程语言。本教程从变量和函数讲起，帮助初学者学习 Python 编程。Debian 自带 Python 3。"),
    (1, "/python/pip", "用 pip 安装 Python 软件包", ["虚拟环境"], "pip 是 Python 的软件包管理工具。建议在虚拟环境中使用 pip 安装软件包，避免与系统的软件包冲突。"),
    (1, "/ml/intro", "机器学习简介", ["监督学习", "无监督学习"], "机器学习让计算机从数据中学习规律。监督学习使用带标签的数据训练模型，无监督学习则在没有标签的数据中寻找结构。"),
    (1, "/ml/deep", "深度学习与神经网络", ["卷积神经网络"], "深度学习是机器学习的一个分支，使用多层神经网络。卷积神经网络在图像识别中表现出色。训练深度学习模型通常需要 GPU。"),
    (1, "/ml/nlp", "中文自然语言处理", ["中文分词"], "中文文本没有空格分隔词语，所以自然语言处理的第一步通常是中文分词。jieba 是常用的 Python 中文分词工具。"),
    (1, "/search/bm25", "搜索引擎的排序算法", ["BM25", "PageRank"], "搜索引擎根据相关性给网页排序。BM25 根据词频和文档长度计算相关性，PageRank 根据网页之间的链接计算重要性。"),
    (1, "/search/index", "倒排索引", ["分词", "压缩"], "倒排索引记录每个词出现在哪些文档中。搜索引擎先对文档分词，再建立倒排索引，查询时只需要查找词语对应的文档列表。"),
    (1, "/linux/shell", "Linux 命令行入门", ["常用命令"], "命令行是使用 Linux 的重要方式。常用命令包括 ls、cd、cp 和 mv。学会命令行可以大大提高工作效率。"),
    (1, "/linux/network", "Linux 网络命令", ["ip", "ping"], "ip 命令可以查看和配置网络接口，ping 命令可以测试网络连通性。排查网络故障时，这两个命令最常用。"),
    (1, "/docker", "容器入门", ["镜像", "容器"], "容器把应用程序和它的依赖打包在一起。镜像是只读的模板，容器是镜像的运行实例。容器比虚拟机更轻量。"),
    (1, "/git", "Git 版本控制", ["分支", "合并"], "Git 是分布式版本控制系统。每个开发者都有完整的仓库副本。使用分支可以并行开发新功能，完成后再合并到主分支。"),
    (1, "/database", "数据库基础", ["SQL"], "数据库用于存储和查询结构化数据。SQL 是关系数据库的查询语言。常见的数据库有 PostgreSQL 和 MySQL。"),
    (1, "/web", "网页服务器配置", ["nginx"], "nginx 是高性能的网页服务器。安装后编辑配置文件，设置网站根目录和端口，然后重新加载服务即可生效。"),
    (2, "/2024/debian-12", "升级到 Debian 12", ["升级前的准备"], "Debian 12 发布后，我把服务器从 Debian 11 升级到了 Debian 12。升级前先备份数据，然后修改软件源，运行 apt-get dist-upgrade 完成升级。"),
    (2, "/2024/laptop", "笔记本电脑上的 Linux", ["无线网卡", "电源管理"], "我在笔记本电脑上安装了 Linux。无线网卡需要安装非自由固件才能工作。电源管理方面，可以安装 tlp 延长电池续航。"),
    (2, "/2024/ml-notes", "学习机器学习的笔记", ["线性回归"], "这是我学习机器学习的笔记。从线性回归开始，理解损失函数和梯度下降，再学习神经网络。机器学习需要一定的数学基础。"),
    (2, "/2024/search-engine", "自己动手写搜索引擎", ["爬虫", "索引", "排序"], "我用 Python 写了一个小型搜索引擎。爬虫抓取网页，索引程序对中文分词并建立倒排索引，最后用 BM25 和 PageRank 排序。"),
    (2, "/2024/ssh-tips", "SSH 使用技巧", ["端口转发"], "SSH 不只可以远程登录，还可以做端口转发。本地端口转发可以把远程服务映射到本机，在两台计算机之间传输数据非常方便。"),
    (2, "/2024/printer", "家里的打印机终于能用了", ["CUPS"], "家里的打印机一直无法在 Linux 下使用。后来发现需要安装厂商提供的驱动，再在 CUPS 中添加打印机，终于可以打印了。"),
    (2, "/2024/input", "折腾中文输入法", ["rime"], "除了拼音输入法，我还试用了 rime 输入法。rime 可以高度定制，支持多种中文输入方案。"),
    (2, "/2024/backup", "我的备份方案", ["异地备份"], "我的备份方案是每天用 rsync 备份到家里的硬盘，每周再把加密后的备份上传到远程服务器，实现异地备份。"),
    (2, "/2024/firewall", "服务器防火墙实践", ["端口"], "新服务器上线前，我会先配置防火墙，只开放 SSH 和网页服务需要的端口。nftables 的规则比 iptables 更清晰。"),
    (2, "/2024/kernel", "编译 Linux 内核", ["配置内核"], "为了支持计算机的新硬件，我尝试自己编译 Linux 内核。先下载内核源码，运行 make menuconfig 配置内核，再编译安装并更新 GRUB 引导程序。"),
    (2, "/2024/security", "服务器安全清单", ["安全更新", "SSH"], "服务器安全的基本清单：及时安装安全更新，禁止 SSH 密码登录，配置防火墙，定期检查日志。"),
    (2, "/2024/docker", "在 Debian 上使用容器", ["安装"], "在 Debian 上安装容器引擎后，就可以下载镜像并运行容器。容器适合部署网页服务和数据库。"),
    (2, "/2024/git", "Git 分支管理经验", ["分支策略"], "使用版本控制系统进行团队开发时，我们为每个新功能建立分支，代码评审通过后再合并到主分支，保持主分支随时可以发布。"),
    # Traditional script with Taiwan wording (軟體 for 软件, 網路 for 网络).
    (3, "/software", "軟體套件管理", ["安裝軟體"], "在 Debian 中使用 apt 安裝軟體套件。設定檔位於 /etc/apt 目錄，更新套件清單請執行 apt update。"),
    (3, "/network", "網路設定", ["無線網路"], "本文說明如何設定有線與無線網路，以及如何檢查網路連線是否正常。"),
    # Office help, for the names users type (excel, 試算表) instead of the page's own.
    (1, "/office/sort", "电子表格数据排序", ["按列排序"], "在电子表格中选中数据区域，然后按一列或多列排序。"),
    (1, "/office/slides", "演示文稿动画效果", ["自定义动画"], "为演示文稿中的对象添加进入和退出动画。"),
    (1, "/office/compat", "Microsoft Excel 兼容性", ["导入"], "导入 Excel 文件时保留排序和筛选的设置。"),
    # A tag cloud that holds every word of many questions and answers none.
    (2, "/tags", "标签", ["标签云"], "标签：Debian rsync 数据 备份 远程 硬盘 网络 安装 内核 防火墙 输入法"),
    # A sentence whose words a fragment of it does not share (破折号 / 减号).
    (1, "/typography", "排版规则", ["标点"], "在纯文本中，可以用破折号替换一个或两个减号，让排版更清楚。"),
]


def page_events() -> list[PageEvent]:
    return [page_event(SITES[site] + path, title, body, headings) for site, path, title, headings, body in PAGES]


def url(site: int, path: str) -> str:
    return SITES[site] + path
