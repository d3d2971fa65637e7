# "Charts as data": what a matplotlib figure shows, as JSON-ready values, so that a chat UI can
# redraw the chart and a model can read numbers instead of pixels. It runs next to the code that
# drew the figure, which can forge or break anything here: the host checks and caps the result
# again (src/sandbox/output/chart-data.ts), so this module only has to be useful and not raise.
import math

_SCALES = ("linear", "log", "symlog", "logit")
# Line2D linestyles that draw no line: such a line is a set of markers (scatter, boxplot fliers).
_NO_LINE = ("None", "none", "", " ")
_BOX_STATS = ("min", "firstQuartile", "median", "thirdQuartile", "max")


def chart_data(figure, max_series=20, max_points=1000, max_text=200, max_charts=8):
    """The chart(s) of `figure` as a dict (one axes, or "composite"), or None when it has none.

    Line and scatter charts keep at most `max_series` series of `max_points` points each, bar
    charts `max_series` groups and `max_points` bars, pies `max_points` wedges, box plots
    `max_series` boxes; strings are cut to `max_text` characters; `truncated` tells.
    """
    try:
        caps = (max(0, int(max_series)), max(0, int(max_points)), max(0, int(max_text)))
        axes = [ax for ax in figure.get_axes() if _has_data(ax)]
        if not axes:
            return None
        charts = [_safe_chart(ax, _Caps(*caps)) for ax in axes[: max(1, int(max_charts))]]
        top = _Caps(*caps)
        # Figure.get_suptitle() is new in matplotlib 3.8; the sandbox image has 3.6.
        if hasattr(figure, "get_suptitle"):
            suptitle = top.text(figure.get_suptitle()) or None
        else:
            suptitle = top.text(figure._suptitle and figure._suptitle.get_text()) or None
        if len(axes) == 1:
            charts[0]["title"] = charts[0]["title"] or suptitle
            charts[0]["truncated"] = charts[0]["truncated"] or top.truncated
            return charts[0]
        truncated = top.truncated or len(axes) > len(charts) or any(c["truncated"] for c in charts)
        return {"type": "composite", "title": suptitle, "charts": charts, "truncated": truncated}
    except Exception:
        # Exception, not BaseException: an interrupt of the cell must still stop it.
        return None


class _Caps:
    def __init__(self, series, points, text):
        self.series, self.points, self.text_length = series, points, text
        self.truncated = False

    def text(self, value):
        text = "" if value is None else str(value)
        if len(text) > self.text_length:
            self.truncated = True
        return text[: self.text_length]

    def first(self, items, limit):
        if len(items) > limit:
            self.truncated = True
        return items[:limit]


def _has_data(ax):
    if ax.get_label() == "<colorbar>":
        return False
    return bool(ax.lines or ax.collections or ax.patches or ax.images or ax.containers)


def _safe_chart(ax, caps):
    try:
        kinds = (_axis_kind(ax.xaxis), _axis_kind(ax.yaxis))
        chart = {
            "type": "unknown",
            "title": caps.text(ax.get_title() or ax.get_title("left") or ax.get_title("right")),
            "xLabel": caps.text(ax.get_xlabel()) or None,
            "yLabel": caps.text(ax.get_ylabel()) or None,
            "xScale": kinds[0] or _scale(ax.get_xscale()),
            "yScale": kinds[1] or _scale(ax.get_yscale()),
            "elements": [],
        }
        chart["title"] = chart["title"] or None
        # Box plots and bars are drawn with lines and patches too: the most specific reading wins.
        for read in (_box, _pie, _bar, _series):
            found = read(ax, kinds, caps)
            if found:
                chart["type"], chart["elements"] = found
                break
        return {**chart, "truncated": caps.truncated}
    except Exception:
        # One odd axes (a custom artist, a broken unit converter) must not hide the others.
        empty = dict(title=None, xLabel=None, yLabel=None, xScale="linear", yScale="linear")
        return {"type": "unknown", **empty, "elements": [], "truncated": False}


def _scale(name):
    # Custom scales ("function", registered ones) have no meaning for a reader: shown as linear.
    return name if name in _SCALES else "linear"


def _axis_kind(axis):
    from matplotlib import category, dates
    if isinstance(axis.units, category.UnitData):
        return "categorical"
    formatters = (dates.DateFormatter, dates.AutoDateFormatter, dates.ConciseDateFormatter)
    if isinstance(axis.get_major_formatter(), formatters):
        return "datetime"
    return "datetime" if isinstance(axis.get_major_locator(), dates.DateLocator) else None


def _num(value):
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _values(axis, kind, values, caps):
    """Axis coordinates as a reader sees them: category names, ISO dates or numbers."""
    numbers = [_num(v) for v in values]
    if kind == "categorical":
        names = iter(axis.get_major_formatter().format_ticks([v for v in numbers if v is not None]))
        # A position between categories has no name: it stays a number.
        return [v if v is None else (caps.text(next(names)) or v) for v in numbers]
    if kind == "datetime":
        from matplotlib import dates
        return [None if v is None else _iso(dates, v) for v in numbers]
    return numbers


def _iso(dates, number):
    try:
        return dates.num2date(number).isoformat()
    except (ValueError, OverflowError):  # before year 1 or after 9999
        return None


def _labeler(axis, kind, caps):
    """Names a bar's or a box's position: its tick label when the code set one, else its value."""
    from matplotlib import ticker
    fixed = []
    # Ticks the code placed itself (set_xticks(ticks, labels), boxplot's) name what stands there.
    if kind is None and isinstance(axis.get_major_locator(), ticker.FixedLocator):
        ticks = [float(t) for t in axis.get_ticklocs()]
        fixed = list(zip(ticks, axis.get_major_formatter().format_ticks(ticks)))

    def label(position):
        for tick, text in fixed:
            if _close(tick, position):
                return caps.text(text)
        value = _values(axis, kind, [position], caps)[0]
        return value if isinstance(value, str) else "" if value is None else "%g" % value

    return label


def _close(a, b, scale=0.0):
    return abs(a - b) <= 1e-9 * (abs(a) + abs(b) + abs(scale)) + 1e-12


def _public(label):
    # matplotlib names unlabelled artists "_child3", "_nolegend_", ...: not a name for a reader.
    label = "" if label is None else str(label)
    return "" if label.startswith("_") else label


def _series(ax, kinds, caps):
    import numpy
    from matplotlib.collections import PathCollection
    from matplotlib.container import ErrorbarContainer
    # errorbar() draws its caps as marker lines: part of the error bars, not series.
    errorbars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    caplines = {id(line) for c in errorbars for line in c.lines[1]}
    found, markers_only = [], True
    for line in ax.get_lines():
        # axhline/axvline are drawn partly in axes coordinates: guides, not data.
        if id(line) in caplines or line.get_transform() is not ax.transData:
            continue
        if len(line.get_xydata()):
            found.append((line.get_label(), line.get_xydata()))
            markers_only = markers_only and line.get_linestyle() in _NO_LINE
    for collection in ax.collections:
        if isinstance(collection, PathCollection) and len(collection.get_offsets()):
            offsets = numpy.ma.filled(numpy.ma.asarray(collection.get_offsets(), float), numpy.nan)
            found.append((collection.get_label(), offsets))
    elements = []
    for label, xy in caps.first(found, caps.series):
        xy = caps.first(xy, caps.points)
        xs = _values(ax.xaxis, kinds[0], xy[:, 0], caps)
        ys = _values(ax.yaxis, kinds[1], xy[:, 1], caps)
        points = [list(p) for p in zip(xs, ys)]
        elements.append({"label": caps.text(_public(label)), "points": points})
    return ("scatter" if markers_only else "line", elements) if elements else None


def _bar(ax, kinds, caps):
    from matplotlib.container import BarContainer
    elements = []
    for group in caps.first([c for c in ax.containers if isinstance(c, BarContainer)], caps.series):
        horizontal = getattr(group, "orientation", None) == "horizontal"
        label = _labeler(*((ax.yaxis, kinds[1]) if horizontal else (ax.xaxis, kinds[0])), caps)
        name = caps.text(_public(group.get_label()))
        for bar in group.patches:
            if len(elements) >= caps.points:
                caps.truncated = True
                break
            x, y, width, height = bar.get_x(), bar.get_y(), bar.get_width(), bar.get_height()
            position, value = (y + height / 2, width) if horizontal else (x + width / 2, height)
            elements.append({"label": label(position), "group": name, "value": _num(value)})
    return ("bar", elements) if elements else None


def _pie(ax, kinds, caps):
    from matplotlib.patches import Wedge
    wedges = caps.first([p for p in ax.patches if isinstance(p, Wedge)], caps.points)
    elements = [{"label": caps.text(_public(w.get_label()) or _pie_text(ax, w)),
                 "angle": _num(w.theta2 - w.theta1), "radius": _num(w.r)} for w in wedges]
    return ("pie", elements) if elements else None


def _pie_text(ax, wedge):
    # ax.pie(labels=...) names its wedges; a pie drawn by hand may only have texts beside them.
    cx, cy = wedge.center
    for text in ax.texts:
        x, y = (float(c) for c in text.get_position())
        angle = math.degrees(math.atan2(y - cy, x - cx)) % 360
        inside = (angle - wedge.theta1) % 360 < wedge.theta2 - wedge.theta1
        if inside and math.hypot(x - cx, y - cy) > wedge.r:
            return text.get_text()
    return ""


def _box(ax, kinds, caps):
    from matplotlib.patches import PathPatch
    # ax.boxplot draws each box as a closed line (a PathPatch with patch_artist=True), then two
    # whiskers on its centre, two caps, a median across it and a line of flier markers. The axes
    # keeps no record of it, so the boxes are recognised from that geometry.
    lines = [(line.get_xydata(), line.get_linestyle() in _NO_LINE) for line in ax.get_lines()]
    shapes = [xy for xy, bare in lines if not bare and len(xy) >= 5 and (xy[0] == xy[-1]).all()]
    shapes += [p.get_path().vertices for p in ax.patches if isinstance(p, PathPatch)]
    segments = [xy for xy, bare in lines if not bare and len(xy) == 2]
    marks = [xy for xy, bare in lines if bare]
    # Vertical boxes have their position on x (column 0), horizontal ones on y.
    found = [_boxes(shapes, segments, marks, a, caps.series + 1) for a in (0, 1)]
    horizontal = found[1][0] > found[0][0]
    boxes = sorted(found[horizontal][1], key=lambda box: box[0])
    label = _labeler(*((ax.yaxis, kinds[1]) if horizontal else (ax.xaxis, kinds[0])), caps)
    elements = [{"label": label(box[0]), **{k: _num(v) for k, v in zip(_BOX_STATS, box[1:6])},
                 "outliers": [_num(v) for v in caps.first(box[6], caps.points)]}
                for box in caps.first(boxes, caps.series)]
    return ("box", elements) if elements else None


def _boxes(shapes, segments, marks, a, limit):
    """(score, boxes) for one orientation; `a` is the column of the boxes' positions."""
    v, score, boxes = 1 - a, 0, []
    for shape in shapes:
        a0, a1, v0, v1 = min(shape[:, a]), max(shape[:, a]), min(shape[:, v]), max(shape[:, v])
        centre, width = (a0 + a1) / 2, a1 - a0
        # A whisker runs from the box's edge outwards along its centre.
        whiskers = [s for s in segments if all(_close(p, centre, width) for p in s[:, a])
                    and s[0, v] != s[1, v] and (min(s[:, v]) >= v1 or max(s[:, v]) <= v0)]
        across = [s for s in segments if s[0, v] == s[1, v] and v0 <= s[0, v] <= v1
                  and s[0, a] != s[1, a] and a0 <= min(s[:, a]) and max(s[:, a]) <= a1]
        if whiskers or across:
            # Caps at a whisker of length 0 sit on the box too; the median spans its full width.
            median = max(across, key=lambda s: abs(s[1, a] - s[0, a]))[0, v] if across else None
            low = min([v0] + [min(s[:, v]) for s in whiskers])
            high = max([v1] + [max(s[:, v]) for s in whiskers])
            # Beyond the whiskers only: a mean marker (showmeans) sits between them.
            outliers = [p[v] for m in marks for p in m
                        if _close(p[a], centre, width) and (p[v] < low or p[v] > high)]
            score += len(whiskers) + bool(across)
            boxes.append((centre, low, v0, median, v1, high, outliers))
            if len(boxes) >= limit:
                break
    return score, boxes
