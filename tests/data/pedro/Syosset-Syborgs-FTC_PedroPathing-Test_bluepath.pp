{
  "startPoint": {
    "x": 56,
    "y": 8,
    "heading": "linear",
    "startDeg": 90,
    "endDeg": 180,
    "locked": false
  },
  "lines": [
    {
      "id": "line-fe7x9wuu4zj",
      "name": "Preload",
      "endPoint": {
        "x": 52.85878300803672,
        "y": 89.8966704936854,
        "heading": "linear",
        "startDeg": 90,
        "endDeg": 130
      },
      "controlPoints": [
        {
          "x": 60.30654420206659,
          "y": 79.97129735935707
        }
      ],
      "color": "#BACD79",
      "locked": false,
      "waitBeforeMs": 0,
      "waitAfterMs": 0,
      "waitBeforeName": "",
      "waitAfterName": ""
    },
    {
      "id": "mlbajvqc-6ojxhm",
      "name": "GPP",
      "endPoint": {
        "x": 9.424738650754453,
        "y": 33.0654420206659,
        "heading": "linear",
        "reverse": false,
        "startDeg": 130,
        "endDeg": 180
      },
      "controlPoints": [
        {
          "x": 53.742824339839274,
          "y": 66.95464982778412
        },
        {
          "x": 50.61768082663603,
          "y": 47.39781859931111
        },
        {
          "x": 52.0149253731343,
          "y": 29.68140068886337
        }
      ],
      "color": "#56ABB5",
      "waitBeforeMs": 0,
      "waitAfterMs": 0,
      "waitBeforeName": "",
      "waitAfterName": ""
    },
    {
      "id": "mlbamvt9-zezs1n",
      "name": "GPPReturn",
      "endPoint": {
        "x": 53.09988518943743,
        "y": 89.72789896670494,
        "heading": "linear",
        "reverse": false,
        "startDeg": 180,
        "endDeg": 130
      },
      "controlPoints": [
        {
          "x": 56.242794124458754,
          "y": 35.58151549942594
        }
      ],
      "color": "#DBD8C6",
      "waitBeforeMs": 0,
      "waitAfterMs": 0,
      "waitBeforeName": "",
      "waitAfterName": ""
    },
    {
      "id": "mlbantxu-1w9vx0",
      "name": "PGP",
      "endPoint": {
        "x": 11.600459242250283,
        "y": 57.78415614236507,
        "heading": "linear",
        "reverse": false,
        "startDeg": 130,
        "endDeg": 180
      },
      "controlPoints": [
        {
          "x": 59.73593570608495,
          "y": 58.15671641791045
        },
        {
          "x": 41.269804822043625,
          "y": 56.495407577497126
        }
      ],
      "color": "#687AA5",
      "waitBeforeMs": 0,
      "waitAfterMs": 0,
      "waitBeforeName": "",
      "waitAfterName": ""
    },
    {
      "id": "mlbarqyd-vbe6ea",
      "name": "PGPReturn",
      "endPoint": {
        "x": 53.07112211803344,
        "y": 89.77267508610792,
        "heading": "linear",
        "reverse": false,
        "startDeg": 180,
        "endDeg": 130
      },
      "controlPoints": [
        {
          "x": 47.51374705212808,
          "y": 61.70952927669343
        }
      ],
      "color": "#B8B78B",
      "waitBeforeMs": 0,
      "waitAfterMs": 0,
      "waitBeforeName": "",
      "waitAfterName": ""
    },
    {
      "id": "mlbau95g-0oywzc",
      "name": "PPG",
      "endPoint": {
        "x": 18.562571756601603,
        "y": 82.94374282433986,
        "heading": "linear",
        "reverse": false,
        "startDeg": 130,
        "endDeg": 180
      },
      "controlPoints": [
        {
          "x": 46.96839687991225,
          "y": 80.9770378874857
        }
      ],
      "color": "#7D56A9",
      "waitBeforeMs": 0,
      "waitAfterMs": 0,
      "waitBeforeName": "",
      "waitAfterName": ""
    },
    {
      "id": "mlbb4s96-f4le3z",
      "name": "PPGReturn",
      "endPoint": {
        "x": 53.06314580941446,
        "y": 89.40757749712972,
        "heading": "linear",
        "reverse": false,
        "startDeg": 180,
        "endDeg": 130
      },
      "controlPoints": [],
      "color": "#8DC98A",
      "waitBeforeMs": 0,
      "waitAfterMs": 0,
      "waitBeforeName": "",
      "waitAfterName": ""
    },
    {
      "id": "mlbdfovd-f15ezi",
      "name": "LeaveZone",
      "endPoint": {
        "x": 20.96785304247991,
        "y": 70.0390355912744,
        "heading": "linear",
        "reverse": false,
        "startDeg": 130,
        "endDeg": 180
      },
      "controlPoints": [],
      "color": "#AAB8DC",
      "waitBeforeMs": 0,
      "waitAfterMs": 0,
      "waitBeforeName": "",
      "waitAfterName": ""
    }
  ],
  "shapes": [
    {
      "id": "triangle-1",
      "name": "Red Goal",
      "vertices": [
        {
          "x": 144,
          "y": 70
        },
        {
          "x": 144,
          "y": 144
        },
        {
          "x": 120,
          "y": 144
        },
        {
          "x": 138,
          "y": 119
        },
        {
          "x": 138,
          "y": 70
        }
      ],
      "color": "#dc2626",
      "fillColor": "#ff6b6b"
    },
    {
      "id": "triangle-2",
      "name": "Blue Goal",
      "vertices": [
        {
          "x": 6,
          "y": 119
        },
        {
          "x": 25,
          "y": 144
        },
        {
          "x": 0,
          "y": 144
        },
        {
          "x": 0,
          "y": 70
        },
        {
          "x": 7,
          "y": 70
        }
      ],
      "color": "#2563eb",
      "fillColor": "#60a5fa"
    }
  ],
  "sequence": [
    {
      "kind": "path",
      "lineId": "line-fe7x9wuu4zj"
    },
    {
      "kind": "path",
      "lineId": "mlbajvqc-6ojxhm"
    },
    {
      "kind": "path",
      "lineId": "mlbamvt9-zezs1n"
    },
    {
      "kind": "path",
      "lineId": "mlbantxu-1w9vx0"
    },
    {
      "kind": "path",
      "lineId": "mlbarqyd-vbe6ea"
    },
    {
      "kind": "path",
      "lineId": "mlbau95g-0oywzc"
    },
    {
      "kind": "path",
      "lineId": "mlbb4s96-f4le3z"
    },
    {
      "kind": "path",
      "lineId": "mlbdfovd-f15ezi"
    }
  ],
  "version": "1.2.1",
  "timestamp": "2026-02-07T04:24:24.969Z"
}