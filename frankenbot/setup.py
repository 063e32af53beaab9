"""ament_python setup for the frankenbot package."""

from glob import glob

from setuptools import find_packages, setup

PACKAGE = "frankenbot"
NODES = ("planner", "executor", "perception", "memory", "sim")

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*"]),
    package_data={PACKAGE: ["program/*.lark", "py.typed", "eval/data/*.json"]},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.launch.py")),
        (f"share/{PACKAGE}/config", glob("config/*.yaml") + glob("config/*.sdf")
         + glob("config/*.json") + glob("config/*.xml")),
        (f"share/{PACKAGE}/skills", glob("skills/*.fb")),
        (f"share/{PACKAGE}/urdf", glob("urdf/*.xacro")),
    ],
    install_requires=["setuptools"],
    zip_safe=False,
    maintainer="FrankenBot developers",
    maintainer_email="frankenbot@example.com",
    description="A ROS 2 robot brain for a UR5e driven by one VLM call per task.",
    license="Apache-2.0",
    tests_require=["pytest"],
    entry_points={
        "console_scripts": [f"{n} = {PACKAGE}.nodes.{n}_node:main" for n in NODES]
        + [f"frankenbot = {PACKAGE}.cli:main"],
    },
)
